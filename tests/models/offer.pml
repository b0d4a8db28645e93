/*
 * offer.pml - the parallel-for's offer (runtime/pfor/share.c rt_pfor_offer_post,
 * rt_pfor_offer_withdraw; runtime/core/work.c find_task).
 *
 * A caller of dagrt_parallel_for puts a task descriptor that lives in its
 * stack frame (the job) into the runtime's one offer word, after adding one
 * count to the loop's group. Any thread looking for work may take it with
 * an exchange; the taker runs the offered share and completes the count
 * when it finishes (its last access to the job). The caller, after its own
 * share, withdraws the offer with a CAS if it is still there and then runs
 * the share and completes the count itself. Then it waits for the count to
 * reach 0 and returns, which ends the job's life; its next loop may post an
 * offer at the same address again (ABA on the word).
 *
 * Checked, over two loops back to back and two takers: every loop's
 * offered share runs exactly once (assert in the caller), and nobody
 * touches a job after its caller returned (assert in the taker).
 *
 * Negative controls (see meson.build), each must be rejected:
 *   -DWITHDRAW_NOCAS  the caller withdraws with a load and a store: a
 *                     taker can take the offer between them, and the share
 *                     runs twice;
 *   -DTAKE_NOXCHG     takers take with a load and a store: two can take
 *                     one offer;
 *   -DEARLY_DONE      the taker completes the count before its last access
 *                     to the job (what pfor_task may do only because its
 *                     descriptor is not in the job): the caller may have
 *                     returned by then.
 */
#define LOOPS 2
#define TAKERS 2

byte offer = 0;      /* 0: none; 1: the caller's job (same address each loop) */
byte count = 0;      /* the loop's group count */
byte ran = 0;        /* times this loop's offered share ran */
bool alive = false;  /* the caller's job exists (its frame is live) */
byte loopsdone = 0;

active proctype caller()
{
    byte l = 0;
    bool won;
    do
    :: l < LOOPS ->
        alive = true;
        ran = 0;
        count = 1;                       /* rt_group_add, before the post */
        atomic { offer == 0 -> offer = 1 }   /* CAS(NULL -> job), release */
        /* ... the caller's own share runs here ... */
#ifdef WITHDRAW_NOCAS
        if
        :: offer == 1 -> offer = 0; won = true
        :: else -> won = false
        fi;
#else
        atomic {
            if
            :: offer == 1 -> offer = 0; won = true
            :: else -> won = false
            fi
        };
#endif
        if
        :: won -> ran++; count--         /* run the share, complete the count */
        :: else -> skip
        fi;
        count == 0;                      /* the group wait */
        assert(ran == 1);
        alive = false;                   /* return: the frame is gone */
        l++
    :: else -> break
    od;
    loopsdone = 1
}

active [TAKERS] proctype taker()
{
    byte o;
    do
    :: loopsdone == 1 -> break
    :: offer != 0 ->                     /* relaxed look, then the exchange */
#ifdef TAKE_NOXCHG
        o = offer;
        offer = 0;
#else
        atomic { o = offer; offer = 0 };
#endif
        if
        :: o == 1 ->
            assert(alive);
            ran++;                       /* the offered share */
#ifdef EARLY_DONE
            count--;
            assert(alive);               /* e.g. reading the descriptor after */
#else
            assert(alive);
            count--                      /* the task's finish: last access */
#endif
        :: else -> skip
        fi
    od
}
