/* How many cores this process may use, and how many of them are free now. */
#ifndef S2S_BASE_CORES_H
#define S2S_BASE_CORES_H

/* The cores this process may run on (its affinity mask; at least 1). */
int cores_usable(void);

/* The usable cores less those other processes keep busy now: the runnable threads of
   the host (/proc/loadavg's fourth field) other than the calling one, at most the usable
   cores and at least 1 left. A snapshot, taken at no cost: a command that starts beside
   one busy process on 2 cores gets 1. Where /proc cannot be read, cores_usable(). */
int cores_free(void);

/* cores_free's rule on given figures: usable cores and runnable threads (the caller
   included). */
int cores_free_of(int usable, int runnable);

#endif
