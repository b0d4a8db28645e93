/*
 * output_tmp.c - the one table of temporaries that an interrupt removes,
 * shared by both halves of the output layer (output_os.h): output_posix.c's
 * signal handler and output_win32.c's console handler walk it; both change
 * it only here, with the interrupts held (dg_os_hold_signals), so a handler
 * never sees a half-made change.
 */
#include "output_os.h"

#include <errno.h>

const char *volatile dg_os_tmp_slots[DG_OS_TMP_SLOTS];

int dg_os_remember(const char *tmp)
{
    for (int i = 0; i < DG_OS_TMP_SLOTS; i++)
        if (!dg_os_tmp_slots[i]) {
            dg_os_tmp_slots[i] = tmp;
            return 0;
        }
    return EMFILE;
}

void dg_os_forget(const char *tmp)
{
    dg_os_hold_signals();
    for (int i = 0; i < DG_OS_TMP_SLOTS; i++)
        if (dg_os_tmp_slots[i] == tmp) dg_os_tmp_slots[i] = NULL;
    dg_os_release_signals();
}
