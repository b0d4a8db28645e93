#ifndef IO_SCENARIOS_H
#define IO_SCENARIOS_H
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif
int io_scn_cancel_nesting(void);
int io_scn_cancel_cross_thread(void);
int io_scn_clock(void);
#endif
