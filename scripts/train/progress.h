/* progress.h — clocks and log lines of the training tools. */
#ifndef SAC_TRAIN_PROGRESS_H
#define SAC_TRAIN_PROGRESS_H

#include <stdio.h>

/* Wall-clock seconds from an arbitrary start (monotonic). */
double progress_wall_seconds(void);
/* CPU time of all the process's threads: on a shared machine, what the work itself cost. */
double progress_cpu_seconds(void);
/* printf to stdout and, when log is not NULL, the same line to the log; both flushed. */
void progress_say(FILE *log, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
