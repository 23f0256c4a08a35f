#include "train/fault.h"

#include <stdlib.h>

#define FAULT_MAX 16

bool fault_nonfinite(long step)
{
    static bool parsed;
    static long steps[FAULT_MAX];
    static int n;
    if (!parsed) {
        parsed = true;
        const char *f = getenv("S2S_FAULT_NONFINITE");
        while (f && *f && n < FAULT_MAX) {
            char *end;
            long s = strtol(f, &end, 10);
            if (end == f)
                break;
            steps[n++] = s;
            f = *end == ',' ? end + 1 : end;
        }
    }
    for (int i = 0; i < n; i++)
        if (steps[i] == step)
            return true;
    return false;
}
