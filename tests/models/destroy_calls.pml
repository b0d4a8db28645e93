/*
 * destroy_calls.pml - dagrt_destroy against threads outside the runtime
 * inside its calls (runtime/core/destroy.c, "DESTROY AND THREADS OUTSIDE";
 * rt_call_enter / rt_call_leave, dagrt_destroy).
 *
 * Two threads outside the runtime make calls in a loop: one makes waits
 * on the world (refused from RT_DRAINING: sync.c's timed waits, io.c's
 * calls), which end when destroy cancels rt->waits or by themselves; the
 * other group waits (refused only at RT_SEALED), which end once the drain
 * has run every task or by themselves. A call counts itself in `calls`,
 * then loads `closing`; refused, it counts itself out, and that is its
 * last access. Inside, it touches the runtime when it starts and when it
 * ends. Destroy stores RT_DRAINING, drains (every task runs), stores
 * RT_SEALED, cancels rt->waits, waits until `calls` is 0 and frees. All
 * four of the pair's accesses are seq_cst in the C code, so the model is
 * sequentially consistent.
 *
 * The contract (docs/runtime.md, "Shutdown"): a thread may be inside a
 * call when destroy begins and may begin calls while destroy still runs
 * tasks (`drained` false, a ghost: the first step of a call is taken only
 * then), and makes no call after one returned DAGRT_ECANCELED (refused or
 * cancelled). Like free(), nothing can make a call safe that begins after
 * destroy may have freed the runtime.
 *
 * Checked: no call touches the runtime once it is freed, and nothing is
 * left blocked (destroy returns: no invalid end state).
 * Negative controls (must fail):
 *   -DLOADFIRST  the call loads `closing` before it counts itself;
 *   -DLOOKFIRST  destroy waits for `calls` to be 0 before its drain
 *                (and seals after it): a call begun during the drain
 *                is not waited for;
 *   -DNOCANCEL   destroy does not cancel rt->waits (a wait on the world
 *                that nothing ends keeps it waiting for ever).
 */
#define OPEN     0
#define DRAINING 1
#define SEALED   2

byte closing = OPEN;
byte calls = 0;
bool freed = false;
bool cancelled = false;   /* rt->waits */
bool drained = false;     /* every task has finished */

proctype caller(byte refuse_at; bool group)
{
    do
    :: drained -> break            /* stopped calling: destroy is past its tasks */
    ::
#ifdef LOADFIRST
        atomic {
            !drained;
            if
            :: closing >= refuse_at -> break
            :: else -> skip
            fi
        };
        calls++;
#else
        atomic { !drained; calls++ };
        if
        :: closing >= refuse_at -> assert(!freed); calls--; break   /* refused */
        :: else -> skip
        fi;
#endif
        assert(!freed);            /* the call's first access to rt */
        if
        :: group -> drained        /* its tasks have run */
        :: !group -> cancelled     /* destroy cancelled it: ECANCELED */
        :: skip                    /* it ended by itself */
        fi;
        assert(!freed);            /* its last access */
        if
        :: !group && cancelled -> calls--; break   /* ECANCELED: calls no more */
        :: else -> calls--
        fi
    od
}

proctype destroy()
{
    closing = DRAINING;
#ifdef LOOKFIRST
    cancelled = true;
    calls == 0;
    drained = true;
    closing = SEALED;
#else
    drained = true;
    closing = SEALED;
#ifndef NOCANCEL
    cancelled = true;
#endif
    calls == 0;
#endif
    freed = true
}

init {
    atomic {
        run caller(DRAINING, false);
        run caller(SEALED, true);
        run destroy()
    }
}
