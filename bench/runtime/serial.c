/* serial.c - the serial fib baseline of every runtime contender
 * (workloads.h): one definition, compiled once as C, linked into each. */
#define _GNU_SOURCE
#include "workloads.h"

long bw_fib_serial(int n)
{
    return n < 2 ? n : bw_fib_serial(n - 1) + bw_fib_serial(n - 2);
}
