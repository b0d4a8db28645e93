/*
 * io_watch.pml - the completion thread's sleep on every ring while a
 * thread puts one more in use (runtime/os/reactor_uring_ring.c,
 * kernel_sleep and ring_start; RINGS and REAPING in reactor_uring.c:
 * every ring is made at create, and only those in use are watched).
 *
 * A ring's descriptor is in the completion thread's epoll set only while
 * that thread sleeps there: it says it is asleep, reads how many rings
 * are in use, adds each to the set (adding one whose completion queue holds an
 * entry makes it ready at once: a level), and waits until a watched ring
 * holds an entry or the kick (an eventfd, always in the set) is raised;
 * then it takes them out again and drains every ring it knows. A thread
 * that puts a ring in use (its slot's first submit) publishes it (the
 * count of rings in use), then reads whether
 * the completion thread is asleep and, if so, raises the kick; its first
 * submit comes after, and the kernel posts that op's completion on the
 * new ring. Both pairs are seq_cst (a Dekker pair: the thread writes
 * asleep, then reads the count; the maker writes the count, then reads
 * asleep), which Promela's interleaving gives.
 *
 * Every worker is parked here (the completion thread is the only consumer
 * left): the completion on the new ring must still be served.
 *
 * Checked: the completion is served (the completion thread ends); no
 * invalid end state (the thread asleep for good with a completion that no
 * watched ring shows and no kick).
 *
 * Negative controls (meson.build), each must fail:
 *   KICK_FIRST  the maker reads asleep before it publishes the ring (the
 *               thread reads the old count after that read, and sleeps
 *               without the new ring and without a kick);
 *   NOKICK      the maker never kicks (a ring put in use while the thread
 *               sleeps waits for a wake-up that no watched ring sends).
 */

byte nlive = 1;        /* rings in use: ring 0 (the shared slot's) from the start */
bool asleep = false;
bool kick = false;
bool watched[2];
byte tail[2];          /* completions posted per ring */
byte head[2];          /* completions consumed per ring */
byte served = 0;

proctype Maker() {
    bool a;
#ifdef KICK_FIRST
    a = asleep;
    nlive = 2;
#else
    nlive = 2;
    a = asleep;
#endif
#ifndef NOKICK
    if
    :: a -> kick = true
    :: else -> skip
    fi;
#endif
    /* the ring's first submit; the kernel posts its completion */
    tail[1]++
}

proctype Completion() {
    byte n, i;
    do
    :: served == 1 -> break
    :: else ->
        /* drain every ring it knows */
        i = 0;
        n = nlive;
        do
        :: i < n ->
            if
            :: head[i] < tail[i] -> served = served + tail[i] - head[i]; head[i] = tail[i]
            :: else -> skip
            fi;
            i++
        :: else -> break
        od;
        if
        :: served == 1 -> break
        :: else -> skip
        fi;
        /* kernel_sleep */
        asleep = true;
        n = nlive;
        i = 0;
        do
        :: i < n -> watched[i] = true; i++
        :: else -> break
        od;
        /* epoll_wait: a watched ring's level, or the kick */
        (kick || (watched[0] && head[0] < tail[0]) || (watched[1] && head[1] < tail[1]));
        asleep = false;
        kick = false;
        watched[0] = false;
        watched[1] = false
    od
}

init {
    atomic {
        run Maker();
        run Completion()
    }
}
