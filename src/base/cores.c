#include "base/cores.h"

#include <sched.h>
#include <stdio.h>
#include <unistd.h>

int cores_usable(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

int cores_free_of(int usable, int runnable)
{
    int others = runnable - 1;
    if (others < 0)
        others = 0;
    int n = usable - others;
    return n < 1 ? 1 : n > usable ? usable : n;
}

int cores_free(void)
{
    int usable = cores_usable();
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return usable;
    double a1, a5, a15;
    int running = 0, total = 0;
    int got = fscanf(f, "%lf %lf %lf %d/%d", &a1, &a5, &a15, &running, &total);
    fclose(f);
    return got == 5 ? cores_free_of(usable, running) : usable;
}
