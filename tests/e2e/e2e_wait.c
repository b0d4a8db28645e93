/* e2e_wait.c - the waits of the e2e checker's task bodies (issue 36). A
 * task whose name ends in `_KIND` (its own name, after the last dot of a
 * subgraph path and the last underscore: `t3_sleep`, `decode_sleep4`,
 * `t7_cw0`) waits in its body instead of spinning, and the checker checks
 * what the wait returned, so that a wait that hangs, returns early or
 * returns the wrong thing fails the run. soak.py draws these names for
 * fiber tasks (and the pairs' other ends for any task); the hand-written
 * graphs of tests/e2e/issue36 and tests/e2e/engine use them too.
 *
 *   sleepN   dagrt_sleep N times (default 1): 0, and at least its time passed
 *   evto     dagrt_event_wait_until on an event never set: DAGRT_ETIMEDOUT,
 *            and the deadline passed
 *   semto    the same with a semaphore of no units
 *   mtxto    the same with a mutex the task holds itself
 *   condto   dagrt_cond_wait with a deadline, never signalled: ETIMEDOUT and
 *            the mutex held again
 *   ev, sem, mtx   untimed (or with a far deadline) waits that a thread of
 *            the checker outside the runtime (the poker) satisfies a little
 *            later: 0, after the poker's hand-over
 *   pollto   dagrt_poll (in) with a deadline on a UDP socket nothing is sent
 *            to: ETIMEDOUT, the deadline passed
 *   udp      a datagram to itself on 127.0.0.1 (dagrt_sendto, dagrt_poll with
 *            a deadline, dagrt_recvfrom): the same bytes, from itself
 *   read     dagrt_read of the checker's temp file at a random offset: the
 *            file's bytes
 *   xself    a wait under a cancel scope it requested itself (or its parent
 *            did): DAGRT_ECANCELED; a request on a child leaves the parent
 *   cwK/csK  pair K of the frame: a condition variable's waiter (with a
 *            deadline, so no order of the two can deadlock) and signaller;
 *            0 only after the signal, else ETIMEDOUT after the deadline
 *   xwK/xcK  pair K: a wait on the frame's cancel scope K, and the task
 *            that requests it: ECANCELED only once requested, else
 *            ETIMEDOUT after the deadline (or 0 for a sleep)
 *
 * A task that is not a fiber task waits the same way (helping or blocking,
 * docs/runtime.md); a fiber task's body also checks dagrt_in_fiber. On
 * Windows the I/O kinds sleep instead. */
#define _POSIX_C_SOURCE 200809L
#include "e2e_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if !defined(_WIN32)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#define E2E_HAVE_IO 1
#endif

enum {
    W_NONE, W_SLEEP, W_EVTO, W_SEMTO, W_MTXTO, W_CONDTO, W_EV, W_SEM, W_MTX,
    W_POLLTO, W_UDP, W_READ, W_XSELF, W_CW, W_CS, W_XW, W_XC
};

static const struct { const char *name; int kind; bool pair; } kinds[] = {
    {"sleep", W_SLEEP, false}, {"evto", W_EVTO, false}, {"semto", W_SEMTO, false},
    {"mtxto", W_MTXTO, false}, {"condto", W_CONDTO, false}, {"ev", W_EV, false},
    {"sem", W_SEM, false}, {"mtx", W_MTX, false}, {"pollto", W_POLLTO, false},
    {"udp", W_UDP, false}, {"read", W_READ, false}, {"xself", W_XSELF, false},
    {"cw", W_CW, true}, {"cs", W_CS, true}, {"xw", W_XW, true}, {"xc", W_XC, true},
};

int e2e_wait_kind(const char *name, int *arg)
{
    const char *dot = strrchr(name, '.');
    const char *own = dot ? dot + 1 : name;
    const char *us = strrchr(own, '_');
    *arg = 0;
    if (!us)
        return W_NONE;
    const char *k = us + 1;
    size_t letters = 0;
    while (k[letters] >= 'a' && k[letters] <= 'z')
        letters++;
    const char *digits = k + letters;
    for (const char *d = digits; *d; d++)
        if (*d < '0' || *d > '9')
            return W_NONE;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == letters && strncmp(kinds[i].name, k, letters) == 0) {
            int n = *digits ? atoi(digits) : kinds[i].pair ? 0 : 1;
            if (kinds[i].pair && n >= E2E_PAIRS)
                return W_NONE;
            *arg = n < 1 && !kinds[i].pair ? 1 : n > 16 && !kinds[i].pair ? 16 : n;
            return kinds[i].kind;
        }
    return W_NONE;
}

void e2e_pairs_init(e2e_frame *fr)
{
    for (int k = 0; k < E2E_PAIRS; k++) {
        e2e_pair *p = &fr->pair[k];
        dagrt_mutex_init(&p->m);
        dagrt_cond_init(&p->cv);
        atomic_store(&p->flag, 0);
        dagrt_cancel_init(&p->scope, NULL);
    }
}

/* ------------------------------------------------------------ randomness */
/* Per wait, in the waiting body's own state (wctx): never thread-local,
 * since a fiber task resumes on any thread, and a compiler may keep a
 * thread-local's address across a call that suspends the fiber. */

typedef struct wctx {
    e2e_state *s;
    e2e_frame *fr;
    const char *task;
    dagrt *rt;
    uint64_t rng;
} wctx;

static uint64_t rnd(wctx *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* A short time, lo to hi microseconds, in ns. */
static uint64_t us_between(wctx *w, unsigned lo, unsigned hi)
{
    return ((uint64_t)lo + rnd(w) % (hi - lo + 1)) * 1000u;
}

/* A deadline far enough that only a lost hand-over reaches it (the
 * watchdog, e2e_drive.c, fires first). */
#define FAR_NS (60ull * 1000000000ull)

/* -------------------------------------------------------------- the poker */
/* A thread outside the runtime that sets, releases or unlocks a waiter's
 * object a little after the waiter asked (signalling works from any
 * thread): the untimed waits' other side. A poke is shared by the waiter
 * and the poker until both are done with it (refs). */

enum { P_EVENT, P_SEM, P_MUTEX };

typedef struct poke {
    _Atomic int refs;          /* 0 free; 2 taken: the waiter's and the poker's */
    _Atomic int fired;         /* the poker began its hand-over */
    int op;
    uint64_t due;
    dagrt_event ev;
    dagrt_sem sem;
    dagrt_mutex mtx;
} poke;

#define NPOKES 512
static poke pokes[NPOKES];
static poke *queue[NPOKES];
static int queued;
static pthread_mutex_t poker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t poker_cv = PTHREAD_COND_INITIALIZER;
static bool poker_started;
static _Atomic int poker_failures;   /* seq_cst: the test's bookkeeping */

static void nap_ns(uint64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&t, NULL);
}

static void *poker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&poker_lock);
    for (;;) {
        if (queued == 0) {
            pthread_cond_wait(&poker_cv, &poker_lock);
            continue;
        }
        uint64_t now = dagrt_now_ns();
        int first = 0;
        for (int k = 1; k < queued; k++)
            if (queue[k]->due < queue[first]->due)
                first = k;
        poke *p = queue[first];
        if (p->due > now) {
            uint64_t d = p->due - now;
            pthread_mutex_unlock(&poker_lock);
            nap_ns(d < 100000 ? d : 100000);
            pthread_mutex_lock(&poker_lock);
            continue;
        }
        queue[first] = queue[--queued];
        pthread_mutex_unlock(&poker_lock);
        atomic_store(&p->fired, 1);
        if (p->op == P_EVENT)
            dagrt_event_set(&p->ev);
        else if (p->op == P_SEM)
            dagrt_sem_release(&p->sem, 1);
        else if (dagrt_mutex_unlock(&p->mtx) != 0)
            atomic_fetch_add(&poker_failures, 1);
        atomic_fetch_sub(&p->refs, 1);   /* the poker is done with it */
        pthread_mutex_lock(&poker_lock);
    }
    return NULL;
}

/* A free poke, taken by the waiter and the poker, or NULL. */
static poke *poke_take(wctx *w, int op)
{
    size_t start = (size_t)(rnd(w) % NPOKES);
    for (size_t k = 0; k < NPOKES; k++) {
        poke *p = &pokes[(start + k) % NPOKES];
        int zero = 0;
        if (atomic_compare_exchange_strong(&p->refs, &zero, 2)) {
            p->op = op;
            atomic_store(&p->fired, 0);
            dagrt_event_init(&p->ev, false);
            dagrt_sem_init(&p->sem, 0);
            dagrt_mutex_init(&p->mtx);
            if (op == P_MUTEX && !dagrt_mutex_trylock(&p->mtx)) {
                atomic_store(&p->refs, 0);
                return NULL;
            }
            return p;
        }
    }
    return NULL;
}

static bool poke_post(poke *p, uint64_t delay_ns)
{
    pthread_mutex_lock(&poker_lock);
    if (!poker_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, poker, NULL) != 0) {
            pthread_mutex_unlock(&poker_lock);
            return false;
        }
        pthread_detach(t);
        poker_started = true;
    }
    p->due = dagrt_now_ns() + delay_ns;
    queue[queued++] = p;
    pthread_cond_signal(&poker_cv);
    pthread_mutex_unlock(&poker_lock);
    return true;
}

/* ------------------------------------------------------------- the file */

#if E2E_HAVE_IO
#define FILE_BYTES 65536
static pthread_once_t file_once = PTHREAD_ONCE_INIT;
static int file_fd = -1;

static unsigned char file_byte(size_t k) { return (unsigned char)((k * 2654435761u) >> 13); }

static void file_make(void)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/dagc-e2e-read-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return;
    unlink(path);   /* the descriptor keeps it while the test runs */
    unsigned char buf[4096];
    for (size_t off = 0; off < FILE_BYTES; off += sizeof buf) {
        for (size_t k = 0; k < sizeof buf; k++)
            buf[k] = file_byte(off + k);
        if (pwrite(fd, buf, sizeof buf, (off_t)off) != (ssize_t)sizeof buf) {
            close(fd);
            return;
        }
    }
    file_fd = fd;
}

/* A UDP socket bound to 127.0.0.1 on a port the system picks. */
static int udp_socket(struct sockaddr_in *a)
{
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof *a;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)a, sizeof *a) != 0 || getsockname(fd, (struct sockaddr *)a, &l) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
#endif

/* ------------------------------------------------------------- the waits */

#define BAD(w, ...) e2e_violation((w)->s, (w)->fr, __VA_ARGS__)

static const char *err(int rc) { return rc == 0 ? "0" : dagrt_strerror(rc); }

/* A timed wait that nothing satisfies must time out, and not early. */
static void expect_timeout(wctx *w, const char *what, int rc, uint64_t deadline)
{
    uint64_t now = dagrt_now_ns();
    if (rc != DAGRT_ETIMEDOUT)
        BAD(w, "task %s: %s returned %s, want DAGRT_ETIMEDOUT", w->task, what, err(rc));
    else if (now < deadline)
        BAD(w, "task %s: %s timed out %llu ns before its deadline", w->task, what,
            (unsigned long long)(deadline - now));
}

static void w_sleep(wctx *w, uint64_t ns, dagrt_cancel *c)
{
    uint64_t t0 = dagrt_now_ns();
    int rc = dagrt_sleep(w->rt, ns, c);
    uint64_t t = dagrt_now_ns() - t0;
    if (rc != 0)
        BAD(w, "task %s: dagrt_sleep(%llu ns) returned %s", w->task, (unsigned long long)ns, err(rc));
    else if (t < ns)
        BAD(w, "task %s: dagrt_sleep(%llu ns) returned after %llu ns", w->task,
            (unsigned long long)ns, (unsigned long long)t);
}

/* Timed waits on objects that nothing hands over. */
static void w_timeout(wctx *w, int kind, dagrt_cancel *c)
{
    uint64_t dl = dagrt_now_ns() + us_between(w, 5, 200);
    int rc;
    if (kind == W_EVTO) {
        dagrt_event e;
        dagrt_event_init(&e, false);
        expect_timeout(w, "dagrt_event_wait_until", dagrt_event_wait_until(w->rt, &e, dl, c), dl);
    } else if (kind == W_SEMTO) {
        dagrt_sem sem;
        dagrt_sem_init(&sem, 0);
        expect_timeout(w, "dagrt_sem_acquire_until", dagrt_sem_acquire_until(w->rt, &sem, dl, c), dl);
    } else if (kind == W_MTXTO) {
        dagrt_mutex m;
        dagrt_mutex_init(&m);
        if (!dagrt_mutex_trylock(&m))
            BAD(w, "task %s: dagrt_mutex_trylock of a new mutex failed", w->task);
        expect_timeout(w, "dagrt_mutex_lock_until of a held mutex", dagrt_mutex_lock_until(w->rt, &m, dl, c), dl);
        if ((rc = dagrt_mutex_unlock(&m)) != 0)
            BAD(w, "task %s: dagrt_mutex_unlock returned %s", w->task, err(rc));
    } else { /* W_CONDTO */
        dagrt_mutex m;
        dagrt_cond cv;
        dagrt_mutex_init(&m);
        dagrt_cond_init(&cv);
        if ((rc = dagrt_mutex_lock(w->rt, &m)) != 0)
            BAD(w, "task %s: dagrt_mutex_lock of a free mutex returned %s", w->task, err(rc));
        expect_timeout(w, "dagrt_cond_wait", dagrt_cond_wait(w->rt, &cv, &m, dl, c), dl);
        if (dagrt_mutex_trylock(&m))
            BAD(w, "task %s: dagrt_cond_wait returned without the mutex held", w->task);
        if ((rc = dagrt_mutex_unlock(&m)) != 0)
            BAD(w, "task %s: dagrt_mutex_unlock after dagrt_cond_wait returned %s", w->task, err(rc));
    }
}

/* Untimed (or far-deadline) waits that the poker satisfies. */
static void w_poked(wctx *w, int kind)
{
    int op = kind == W_EV ? P_EVENT : kind == W_SEM ? P_SEM : P_MUTEX;
    poke *p = poke_take(w, op);
    if (!p) {
        w_sleep(w, us_between(w, 5, 50), NULL);   /* every poke in use */
        return;
    }
    if (!poke_post(p, us_between(w, 0, 100))) {
        BAD(w, "task %s: cannot start the poker thread", w->task);
        return;   /* the poke stays taken */
    }
    bool timed = rnd(w) % 2;
    uint64_t dl = dagrt_now_ns() + FAR_NS;
    int rc;
    const char *what;
    if (op == P_EVENT) {
        what = timed ? "dagrt_event_wait_until" : "dagrt_event_wait";
        rc = timed ? dagrt_event_wait_until(w->rt, &p->ev, dl, NULL) : dagrt_event_wait(w->rt, &p->ev);
    } else if (op == P_SEM) {
        what = timed ? "dagrt_sem_acquire_until" : "dagrt_sem_acquire";
        rc = timed ? dagrt_sem_acquire_until(w->rt, &p->sem, dl, NULL) : dagrt_sem_acquire(w->rt, &p->sem);
    } else {
        what = timed ? "dagrt_mutex_lock_until" : "dagrt_mutex_lock";
        rc = timed ? dagrt_mutex_lock_until(w->rt, &p->mtx, dl, NULL) : dagrt_mutex_lock(w->rt, &p->mtx);
    }
    if (rc != 0)
        BAD(w, "task %s: %s (handed over by another thread) returned %s", w->task, what, err(rc));
    else if (!atomic_load(&p->fired))
        BAD(w, "task %s: %s returned 0 before the other thread handed over", w->task, what);
    if (rc == 0 && op == P_MUTEX && (rc = dagrt_mutex_unlock(&p->mtx)) != 0)
        BAD(w, "task %s: dagrt_mutex_unlock of a mutex handed over returned %s", w->task, err(rc));
    if (atomic_load(&poker_failures))
        BAD(w, "task %s: the other thread's dagrt_mutex_unlock failed", w->task);
    atomic_fetch_sub(&p->refs, 1);   /* the waiter is done with it */
}

#if E2E_HAVE_IO
static void w_udp(wctx *w, bool answered, dagrt_cancel *c, bool cancelled)
{
    struct sockaddr_in a;
    int fd = udp_socket(&a);
    if (fd < 0) {
        BAD(w, "task %s: cannot bind a UDP socket on 127.0.0.1: %s", w->task, strerror(errno));
        return;
    }
    if (!answered) {
        uint64_t dl = dagrt_now_ns() + us_between(w, 5, 200);
        int rc = dagrt_poll(w->rt, fd, DAGRT_POLL_IN, dl, c);
        if (cancelled) {
            if (rc != DAGRT_ECANCELED)
                BAD(w, "task %s: dagrt_poll under a cancelled scope returned %s, want DAGRT_ECANCELED",
                    w->task, rc < 0 ? err(rc) : "ready");
        } else if (rc >= 0) {
            BAD(w, "task %s: dagrt_poll of a socket nothing is sent to returned ready (%d)", w->task, rc);
        } else {
            expect_timeout(w, "dagrt_poll", rc, dl);
        }
    } else {
        unsigned char out[64], in[128];
        size_t n = 1 + (size_t)(rnd(w) % sizeof out);
        for (size_t k = 0; k < n; k++)
            out[k] = (unsigned char)rnd(w);
        int64_t r = dagrt_sendto(w->rt, fd, out, n, (struct sockaddr *)&a, sizeof a, NULL);
        if (r != (int64_t)n) {
            BAD(w, "task %s: dagrt_sendto of %zu bytes returned %lld", w->task, n, (long long)r);
        } else {
            int rc = dagrt_poll(w->rt, fd, DAGRT_POLL_IN, dagrt_now_ns() + FAR_NS, NULL);
            if (rc < 0 || !(rc & DAGRT_POLL_IN)) {
                BAD(w, "task %s: dagrt_poll of a socket with a datagram queued returned %s", w->task,
                    rc < 0 ? err(rc) : "not readable");
            } else {
                struct sockaddr_in from;
                size_t fl = sizeof from;
                memset(&from, 0, sizeof from);
                r = dagrt_recvfrom(w->rt, fd, in, sizeof in, (struct sockaddr *)&from, &fl, NULL);
                if (r != (int64_t)n || memcmp(in, out, n) != 0)
                    BAD(w, "task %s: dagrt_recvfrom returned %lld bytes, not the %zu sent", w->task,
                        (long long)r, n);
                else if (from.sin_port != a.sin_port)
                    BAD(w, "task %s: dagrt_recvfrom: the datagram came from another port", w->task);
            }
        }
    }
    int rc = dagrt_close(w->rt, fd);
    if (rc != 0)
        BAD(w, "task %s: dagrt_close of a UDP socket returned %s", w->task, err(rc));
}

static void w_read(wctx *w)
{
    pthread_once(&file_once, file_make);
    if (file_fd < 0) {
        BAD(w, "task %s: cannot write the temp file to read", w->task);
        return;
    }
    unsigned char buf[4096];
    size_t off = (size_t)(rnd(w) % FILE_BYTES), n = 1 + (size_t)(rnd(w) % sizeof buf);
    size_t want = off + n <= FILE_BYTES ? n : FILE_BYTES - off;
    int64_t r = dagrt_read(w->rt, file_fd, buf, n, (int64_t)off, NULL);
    if (r != (int64_t)want) {
        BAD(w, "task %s: dagrt_read of %zu bytes at %zu returned %lld, want %zu", w->task, n, off,
            (long long)r, want);
        return;
    }
    for (size_t k = 0; k < want; k++)
        if (buf[k] != file_byte(off + k)) {
            BAD(w, "task %s: dagrt_read at %zu: byte %zu is wrong", w->task, off, k);
            return;
        }
}
#else
static void w_udp(wctx *w, bool answered, dagrt_cancel *c, bool cancelled)
{
    (void)answered;
    if (cancelled) {
        int rc = dagrt_sleep(w->rt, us_between(w, 5, 50), c);
        if (rc != DAGRT_ECANCELED)
            BAD(w, "task %s: dagrt_sleep under a cancelled scope returned %s", w->task, err(rc));
    } else {
        w_sleep(w, us_between(w, 5, 50), c);
    }
}
static void w_read(wctx *w) { w_sleep(w, us_between(w, 5, 50), NULL); }
#endif

/* A wait under a scope that is cancelled already: ECANCELED at once. */
static void w_xself(wctx *w)
{
    dagrt_cancel parent, child;
    dagrt_cancel_init(&parent, NULL);
    dagrt_cancel_init(&child, &parent);
    uint64_t r = rnd(w);
    /* A request on the child leaves the parent (a sleep under it ends). */
    if (r % 5 == 0) {
        dagrt_cancel_request(&child);
        if (dagrt_cancel_requested(&parent))
            BAD(w, "task %s: a child scope's request reached its parent", w->task);
        w_sleep(w, us_between(w, 5, 50), &parent);
    }
    dagrt_cancel *c = (r >> 8) % 2 ? &child : &parent;
    dagrt_cancel_request(&parent);
    if (!dagrt_cancel_requested(&child))
        BAD(w, "task %s: a child scope is not cancelled with its parent", w->task);
    uint64_t dl = dagrt_now_ns() + us_between(w, 100, 2000);
    int rc, which = (int)((r >> 16) % 6);
    const char *what = "dagrt_sleep";
    switch (which) {
    case 0:
        rc = dagrt_sleep(w->rt, us_between(w, 100, 2000), c);
        break;
    case 1: {
        dagrt_event e;
        dagrt_event_init(&e, false);
        what = "dagrt_event_wait_until";
        rc = dagrt_event_wait_until(w->rt, &e, dl, c);
        break;
    }
    case 2: {
        dagrt_sem sem;
        dagrt_sem_init(&sem, 0);
        what = "dagrt_sem_acquire_until";
        rc = dagrt_sem_acquire_until(w->rt, &sem, dl, c);
        break;
    }
    case 3: {
        dagrt_mutex m;
        dagrt_mutex_init(&m);
        (void)dagrt_mutex_trylock(&m);
        what = "dagrt_mutex_lock_until";
        rc = dagrt_mutex_lock_until(w->rt, &m, dl, c);
        (void)dagrt_mutex_unlock(&m);
        break;
    }
    case 4: {
        dagrt_mutex m;
        dagrt_cond cv;
        dagrt_mutex_init(&m);
        dagrt_cond_init(&cv);
        (void)dagrt_mutex_trylock(&m);
        what = "dagrt_cond_wait";
        rc = dagrt_cond_wait(w->rt, &cv, &m, dl, c);
        if (dagrt_mutex_unlock(&m) != 0)
            BAD(w, "task %s: dagrt_cond_wait (cancelled) returned without the mutex held", w->task);
        break;
    }
    default:
        w_udp(w, false, c, true);
        return;
    }
    if (rc != DAGRT_ECANCELED)
        BAD(w, "task %s: %s under a cancelled scope returned %s, want DAGRT_ECANCELED", w->task, what, err(rc));
}

/* Pair k's waiter: a condition with a deadline (its signaller may run
 * before, after or during it; ordered after it, the flag is set already). */
static void w_cond_waiter(wctx *w, e2e_pair *p)
{
    int rc = dagrt_mutex_lock(w->rt, &p->m);
    if (rc != 0) {
        BAD(w, "task %s: dagrt_mutex_lock returned %s", w->task, err(rc));
        return;
    }
    uint64_t dl = dagrt_now_ns() + us_between(w, 20, 1000);
    for (int guard = 0; !atomic_load(&p->flag) && rc == 0 && guard < 1000; guard++) {
        rc = dagrt_cond_wait(w->rt, &p->cv, &p->m, dl, NULL);
        if (rc == 0 && !atomic_load(&p->flag))
            BAD(w, "task %s: dagrt_cond_wait returned 0 with no signal", w->task);
    }
    if (rc == DAGRT_ETIMEDOUT)
        expect_timeout(w, "dagrt_cond_wait", rc, dl);
    else if (rc != 0)
        BAD(w, "task %s: dagrt_cond_wait returned %s", w->task, err(rc));
    if (dagrt_mutex_trylock(&p->m))
        BAD(w, "task %s: dagrt_cond_wait returned without the mutex held", w->task);
    if ((rc = dagrt_mutex_unlock(&p->m)) != 0)
        BAD(w, "task %s: dagrt_mutex_unlock after dagrt_cond_wait returned %s", w->task, err(rc));
}

static void w_cond_signaller(wctx *w, e2e_pair *p)
{
    int rc = dagrt_mutex_lock(w->rt, &p->m);
    if (rc != 0) {
        BAD(w, "task %s: dagrt_mutex_lock returned %s", w->task, err(rc));
        return;
    }
    atomic_store(&p->flag, 1);
    if (rnd(w) % 2)
        dagrt_cond_signal(&p->cv);
    else
        dagrt_cond_broadcast(&p->cv);
    if ((rc = dagrt_mutex_unlock(&p->m)) != 0)
        BAD(w, "task %s: dagrt_mutex_unlock returned %s", w->task, err(rc));
}

/* Pair k's waiter on the frame's scope k, which its canceller requests. */
static void w_cancel_waiter(wctx *w, e2e_pair *p)
{
    uint64_t r = rnd(w);
    if (r % 3 == 0) {
        uint64_t ns = us_between(w, 20, 1000), t0 = dagrt_now_ns();
        int rc = dagrt_sleep(w->rt, ns, &p->scope);
        if (rc == DAGRT_ECANCELED) {
            if (!dagrt_cancel_requested(&p->scope))
                BAD(w, "task %s: dagrt_sleep returned DAGRT_ECANCELED, its scope not cancelled", w->task);
        } else if (rc != 0) {
            BAD(w, "task %s: dagrt_sleep under a scope returned %s", w->task, err(rc));
        } else if (dagrt_now_ns() - t0 < ns) {
            BAD(w, "task %s: dagrt_sleep returned 0 early", w->task);
        }
        return;
    }
    dagrt_event e;
    dagrt_event_init(&e, false);
    uint64_t dl = dagrt_now_ns() + us_between(w, 20, 1000);
    int rc = dagrt_event_wait_until(w->rt, &e, dl, &p->scope);
    if (rc == DAGRT_ECANCELED) {
        if (!dagrt_cancel_requested(&p->scope))
            BAD(w, "task %s: dagrt_event_wait_until returned DAGRT_ECANCELED, its scope not cancelled",
                w->task);
    } else {
        expect_timeout(w, "dagrt_event_wait_until (event never set, scope not cancelled)", rc, dl);
    }
}

void e2e_wait_run(e2e_state *s, e2e_frame *fr, uint32_t i)
{
    const e2e_node *n = &s->g->nodes[i];
    /* seq_cst: the test's bookkeeping (a seed per wait) */
    static _Atomic uint64_t waits_seeded;
    uint64_t k = atomic_fetch_add(&waits_seeded, 1) + 1;
    wctx w = {s, fr, n->name, s->rt, (s->seed ^ (k * 0x9E3779B97F4A7C15ull)) | 1};
    atomic_fetch_add(&s->waits, 1);
    if ((n->flags & DAGRT_NODE_FIBER) && n->fid >= 0 && s->fid_fiber[n->fid] && !dagrt_in_fiber(s->rt))
        BAD(&w, "fiber task %s runs outside a fiber", n->name);
    int arg = s->wait_arg[i];
    e2e_pair *p = &fr->pair[arg % E2E_PAIRS];
    switch (s->wait_kind[i]) {
    case W_SLEEP:
        for (int j = 0; j < arg; j++)
            w_sleep(&w, us_between(&w, 5, 100), NULL);
        break;
    case W_EVTO: case W_SEMTO: case W_MTXTO: case W_CONDTO:
        w_timeout(&w, s->wait_kind[i], NULL);
        break;
    case W_EV: case W_SEM: case W_MTX:
        w_poked(&w, s->wait_kind[i]);
        break;
    case W_POLLTO:
        w_udp(&w, false, NULL, false);
        break;
    case W_UDP:
        w_udp(&w, true, NULL, false);
        break;
    case W_READ:
        w_read(&w);
        break;
    case W_XSELF:
        w_xself(&w);
        break;
    case W_CW:
        w_cond_waiter(&w, p);
        break;
    case W_CS:
        w_cond_signaller(&w, p);
        break;
    case W_XW:
        w_cancel_waiter(&w, p);
        break;
    case W_XC:
        dagrt_cancel_request(&p->scope);
        break;
    default:
        break;
    }
}
