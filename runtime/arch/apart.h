/*
 * arch/apart.h - how far apart data written by different threads is kept.
 *
 * Two 64-byte lines, not one: x86 cores fetch lines in aligned 128-byte
 * pairs (the L2's adjacent-line prefetcher), so a word on a line of its own
 * still travels with the neighbouring line when another core writes that
 * one; some AArch64 cores have 128-byte lines outright. Every structure
 * whose fields are written by different threads aligns them to RT_APART.
 */
#ifndef DAGRT_APART_H
#define DAGRT_APART_H

#define RT_APART 128

#endif
