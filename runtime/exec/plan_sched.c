/*
 * exec/plan_sched.c - plan mode's list scheduler (plan_sched.h): a
 * critical-path list scheduler over a graph given through calls. Pure: no
 * runtime, no system header, no memory but the caller's scratch words, so
 * dagc compiles this file too (dagc/meson.build) and predicts the frame
 * time with the schedule the runtime will make.
 */
#include "plan_sched.h"

#include <stddef.h>

static inline uint32_t sat_add(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static inline uint32_t node_cost(const ps_graph *g, uint32_t i, uint32_t f)
{
    return (f & PS_GATE) ? 0 : g->cost(g->ctx, i);
}

/* What a node adds to the critical path: its cost, or a parallel node's
 * share of it on nl lists (its range cannot end sooner than that, and in
 * plan mode the lists that run out of work while it runs take its
 * pieces). */
static inline uint32_t path_cost(uint32_t c, uint32_t f, uint32_t nl)
{
    return (f & PS_PARALLEL) && nl > 1 ? c / nl + (c % nl != 0) : c;
}

/* Whether a comes before b in priority order: bottom level down, then
 * index up. A node's bottom level is at least any successor's (costs are
 * never negative) and its index is lower, so this order is topological. */
static inline bool prio_before(const ps_graph *g, uint32_t a, uint32_t b)
{
    uint32_t ba = g->scratch(g->ctx, a)[PS_BL], bb = g->scratch(g->ctx, b)[PS_BL];
    return ba > bb || (ba == bb && a < b);
}

#define LINK(i) g->scratch(g->ctx, (i))[PS_START]   /* the sort's link, until placed */

/* Sorts the list from head (linked through LINK) into priority order:
 * a bottom-up merge sort of a linked list, O(n log n), no memory. */
static uint32_t prio_sort(const ps_graph *g, uint32_t head)
{
    for (uint32_t width = 1;; width *= 2) {
        uint32_t p = head, out = PS_NONE, tail = PS_NONE, merges = 0;
        while (p != PS_NONE) {
            merges++;
            uint32_t q = p, psize = 0;
            for (uint32_t k = 0; k < width && q != PS_NONE; k++) {
                psize++;
                q = LINK(q);
            }
            uint32_t qsize = width;
            while (psize > 0 || (qsize > 0 && q != PS_NONE)) {
                uint32_t e;
                if (psize == 0) {
                    e = q;
                    q = LINK(q);
                    qsize--;
                } else if (qsize == 0 || q == PS_NONE || !prio_before(g, q, p)) {
                    e = p;   /* ties from p: the sort is stable */
                    p = LINK(p);
                    psize--;
                } else {
                    e = q;
                    q = LINK(q);
                    qsize--;
                }
                if (tail == PS_NONE)
                    out = e;
                else
                    LINK(tail) = e;
                tail = e;
            }
            p = q;
        }
        if (tail != PS_NONE)
            LINK(tail) = PS_NONE;
        head = out;
        if (merges <= 1)
            return head;
    }
}

/* When node v could start on each list (est[k]): after its inputs (the
 * last of them; an OR node's first), each from another list xfer_ns
 * later; and how many of its inputs each list holds (aff[k]). One pass
 * over the inputs: the latest input overall (and the latest of another
 * list than its) decides every list's start. */
static void ready_at(const ps_graph *g, uint32_t v, uint32_t f, uint32_t nl, uint32_t *est,
                     uint32_t *aff)
{
    uint32_t np = g->npred(g->ctx, v);
    bool any = (f & PS_OR) != 0;
    uint32_t on[PS_LISTS];
    for (uint32_t k = 0; k < nl; k++) {
        aff[k] = 0;
        on[k] = any ? UINT32_MAX : 0;
    }
    if (np == 0) {
        for (uint32_t k = 0; k < nl; k++)
            est[k] = 0;
        return;
    }
    /* m1: the latest (OR: earliest) input, on list l1; m2: the same among
     * the inputs of other lists than l1 (have2: there is one). */
    uint32_t m1 = 0, m2 = 0, l1 = PS_NONE;
    bool have2 = false;
    for (uint32_t q = 0; q < np; q++) {
        uint32_t p = g->pred(g->ctx, v, q);
        uint32_t fin = g->scratch(g->ctx, p)[PS_FINISH];
        uint32_t k = g->list_of(g->ctx, p);
        if (k < nl) {
            aff[k]++;
            if (any ? fin < on[k] : fin > on[k])
                on[k] = fin;
        }
        if (l1 == PS_NONE || (any ? fin < m1 : fin > m1)) {
            /* the old first is on another list than the new one: it is the
             * latest of the others (every other input is at most it) */
            if (l1 != PS_NONE && k != l1) {
                m2 = m1;
                have2 = true;
            }
            m1 = fin;
            l1 = k;
        } else if (k != l1 && (!have2 || (any ? fin < m2 : fin > m2))) {
            m2 = fin;
            have2 = true;
        }
    }
    uint32_t x1 = sat_add(m1, g->xfer_ns);
    for (uint32_t k = 0; k < nl; k++) {
        if (any) {
            /* the earliest of: an input on k itself, any input from elsewhere */
            est[k] = on[k] < x1 ? on[k] : x1;
        } else if (k == l1) {
            uint32_t x2 = have2 ? sat_add(m2, g->xfer_ns) : 0;
            est[k] = m1 > x2 ? m1 : x2;
        } else {
            est[k] = x1;
        }
    }
}

/* Whether node p has its list (list_of answers nlists or more before). */
static inline bool placed(const ps_graph *g, uint32_t p, uint32_t nl)
{
    return g->list_of(g->ctx, p) < nl;
}

static bool inputs_placed(const ps_graph *g, uint32_t v, uint32_t nl)
{
    uint32_t np = g->npred(g->ctx, v);
    for (uint32_t q = 0; q < np; q++)
        if (!placed(g, g->pred(g->ctx, v, q), nl))
            return false;
    return true;
}

/* The hand-overs that placing v on each list commits the schedule to
 * (xc[k]): its inputs from other lists, each `on main` successor when k
 * is not list 0 (and v itself there when it has no successor: the frame
 * ends on list 0), and each other successor of v whose
 * other inputs placed so far all lie on one other list (wherever that
 * successor goes, one of its inputs will come from another list; a
 * successor whose placed inputs already span two lists has one anyway,
 * and costs nothing more). The second part is what keeps nodes whose
 * successors join them on one list: placed one at a time, the earliest
 * finish alone alternates the lists among equal tasks, and every later
 * join then takes an input from the other thread. */
static void handovers(const ps_graph *g, uint32_t v, uint32_t nl, const uint32_t *aff, uint32_t *xc)
{
    uint32_t np = g->npred(g->ctx, v);
    for (uint32_t k = 0; k < nl; k++)
        xc[k] = np - aff[k];
    uint32_t ns = g->nsucc(g->ctx, v);
    if (ns == 0) {
        /* a last node: the frame ends on list 0 (the caller returns) */
        for (uint32_t k = 1; k < nl; k++)
            xc[k]++;
    }
    for (uint32_t q = 0; q < ns; q++) {
        uint32_t s = g->succ(g->ctx, v, q);
        if (g->flags(g->ctx, s) & PS_MAIN) {
            /* it runs on list 0 whatever its other inputs */
            for (uint32_t k = 1; k < nl; k++)
                xc[k]++;
            continue;
        }
        uint32_t one = PS_NONE;   /* the one list of s's placed inputs */
        bool two = false;
        uint32_t nsp = g->npred(g->ctx, s);
        for (uint32_t z = 0; z < nsp && !two; z++) {
            uint32_t p = g->pred(g->ctx, s, z);
            if (p == v || !placed(g, p, nl))
                continue;
            uint32_t k = g->list_of(g->ctx, p);
            if (one == PS_NONE)
                one = k;
            else if (k != one)
                two = true;
        }
        if (one == PS_NONE || two)
            continue;
        for (uint32_t k = 0; k < nl; k++)
            xc[k] += k != one;
    }
}

/* A parallel node of cost c claimed by list `best`, whose body starts at
 * b: the claimer runs the range from b, and every other list joins it
 * once it is free (its own earlier nodes done) and no later than the range
 * would end without it, xfer_ns after that (its poll finds the offer, its
 * split takes a line from the claimer: pfor/pfor.c). Together they end
 * when the time they spent on it adds up to c: with the claimer and the
 * first m joiners (join times j_1 <= ... <= j_m), at
 * T = (c + b + j_1 + ... + j_m) / (m + 1), taking joiners in order while
 * the next one joins before T. Each participant is busy until T. Returns
 * T (saturated). */
static uint32_t share_parallel(uint32_t xfer, uint32_t nl, uint32_t best, uint32_t b, uint32_t c,
                               uint32_t *free_at, uint64_t *busy)
{
    uint32_t js[PS_LISTS], jk[PS_LISTS], m = 0;
    for (uint32_t k = 0; k < nl; k++) {
        if (k == best)
            continue;
        uint32_t t = sat_add(free_at[k] > b ? free_at[k] : b, xfer);
        uint32_t q = m++;
        for (; q > 0 && js[q - 1] > t; q--) {   /* insertion: at most 15 */
            js[q] = js[q - 1];
            jk[q] = jk[q - 1];
        }
        js[q] = t;
        jk[q] = k;
    }
    uint64_t sum = (uint64_t)b + c, cnt = 1, end = sum;
    uint32_t used = 0;
    while (used < m && js[used] < end) {
        sum += js[used++];
        cnt++;
        end = (sum + cnt - 1) / cnt;
    }
    uint32_t fin = end > UINT32_MAX ? UINT32_MAX : (uint32_t)end;
    busy[best] += fin - b;
    free_at[best] = fin;
    for (uint32_t q = 0; q < used; q++) {
        busy[jk[q]] += fin > js[q] ? fin - js[q] : 0;
        free_at[jk[q]] = fin;
    }
    return fin;
}

bool ps_schedule(const ps_graph *g, ps_result *out)
{
    ps_result r = {0};
    r.last = PS_NONE;
    uint32_t n = g->n;
    uint32_t nl = g->nlists < 1 ? 1 : g->nlists > PS_LISTS ? PS_LISTS : g->nlists;
    r.nlists = nl;
    if (n > (UINT32_MAX >> 1))
        return false;
    /* Bottom levels, from the end (every successor has a higher index),
     * and the nodes linked in index order for the sort. */
    uint32_t head = PS_NONE;
    for (uint32_t v = n; v-- > 0;) {
        uint32_t f = g->flags(g->ctx, v);
        uint32_t c = node_cost(g, v, f);
        uint32_t below = 0;
        uint32_t ns = g->nsucc(g->ctx, v);
        for (uint32_t k = 0; k < ns; k++) {
            uint32_t s = g->succ(g->ctx, v, k);
            if (s <= v || s >= n)
                return false;
            uint32_t b = g->scratch(g->ctx, s)[PS_BL];
            if (b > below)
                below = b;
        }
        uint32_t *w = g->scratch(g->ctx, v);
        /* A parallel node's whole cost here, not its share: placed
         * early, it occupies every list that joins it only for its share
         * (the critical path below counts the share). */
        w[PS_BL] = sat_add(c, below);
        w[PS_START] = head;
        w[PS_FINISH] = 0;
        head = v;
        r.work += c;
    }
    /* The critical path: each node's earliest finish with lists to spare
     * (an AND node after its last input, an OR node after its first, a
     * parallel node taking its share), the latest of them: a lower bound
     * of the frame time, which the bottom levels are not where an OR node
     * follows a long input. In PS_FINISH until placement sets it. */
    for (uint32_t v = 0; v < n; v++) {
        uint32_t f = g->flags(g->ctx, v);
        uint32_t np = g->npred(g->ctx, v), at = 0;
        bool any = (f & PS_OR) != 0;
        for (uint32_t q = 0; q < np; q++) {
            uint32_t e = g->scratch(g->ctx, g->pred(g->ctx, v, q))[PS_FINISH];
            if (q == 0 || (any ? e < at : e > at))
                at = e;
        }
        uint32_t e = sat_add(at, path_cost(node_cost(g, v, f), f, nl));
        g->scratch(g->ctx, v)[PS_FINISH] = e;
        if (e > r.critical)
            r.critical = e;
    }
    /* PS_FINISH holds, until a node is placed, whether it is in the
     * frame's `on main` tail (ps_graph.in_flight): an `on main` node whose
     * successors are all in it. Only a pipeline's schedule has one; tail
     * is its time, its list-0 nodes' own part and bodies. (Nothing reads
     * an unplaced node's PS_FINISH: ready_at reads placed inputs only.) */
    bool pipe = g->in_flight >= 2;
    uint32_t tail = 0;
    uint64_t tail_cost = 0;
    for (uint32_t v = n; v-- > 0;) {
        uint32_t f = g->flags(g->ctx, v), in = pipe && (f & PS_MAIN);
        uint32_t ns = g->nsucc(g->ctx, v);
        for (uint32_t k = 0; k < ns && in; k++)
            in = g->scratch(g->ctx, g->succ(g->ctx, v, k))[PS_FINISH];
        g->scratch(g->ctx, v)[PS_FINISH] = in;
        if (in) {
            uint32_t c = node_cost(g, v, f);
            tail = sat_add(tail, sat_add(g->node_ns, c));
            tail_cost += c;
        }
    }
    /* Whether list 0 has counted the tail yet: after its first node of
     * the frame that is not in it (the caller runs the frame before's tail
     * once it has started this one, while the helpers run this one). */
    bool tail_counted = !pipe || tail == 0;
    head = prio_sort(g, head);
    uint32_t free_at[PS_LISTS] = {0};
    uint32_t st[PS_LISTS], aff[PS_LISTS], xc[PS_LISTS];
    while (head != PS_NONE) {
        /* The next node: among the first PS_WINDOW unplaced nodes of the
         * head's priority (a tie: equal bottom levels), the one whose
         * placement is earliest (below), the first of them on a tie. The
         * head itself always has its inputs placed (they come before it in
         * priority order); another node qualifies once its inputs are. */
        uint32_t bl = g->scratch(g->ctx, head)[PS_BL];
        uint32_t v = PS_NONE, vprev = PS_NONE, best = 0;
        uint64_t best_at = UINT64_MAX;
        uint32_t seen = 0;
        for (uint32_t u = head, uprev = PS_NONE; u != PS_NONE && seen < PS_WINDOW;
             uprev = u, u = LINK(u), seen++) {
            if (g->scratch(g->ctx, u)[PS_BL] != bl)
                break;
            if (u != head && !inputs_placed(g, u, nl))
                continue;
            uint32_t f = g->flags(g->ctx, u);
            uint32_t hi = (f & PS_MAIN) ? 1 : nl;
            ready_at(g, u, f, nl, st, aff);
            handovers(g, u, nl, aff, xc);
            /* The list where u would start first (all lists run it for
             * the same cost), each hand-over it commits to counted at
             * xfer_ns more; ties go to the list with most of its inputs,
             * then the lower list. */
            uint32_t ku = 0;
            uint64_t at_u = UINT64_MAX;
            for (uint32_t k = 0; k < hi; k++) {
                uint32_t s0 = st[k] > free_at[k] ? st[k] : free_at[k];
                uint64_t at = (uint64_t)s0 + (uint64_t)xc[k] * g->xfer_ns;
                if (at < at_u || (at == at_u && aff[k] > aff[ku])) {
                    ku = k;
                    at_u = at;
                }
            }
            if (at_u < best_at) {
                v = u;
                vprev = uprev;
                best = ku;
                best_at = at_u;
            }
        }
        /* Out of the priority list (LINK is v's start from here on). */
        if (vprev == PS_NONE)
            head = LINK(v);
        else
            LINK(vprev) = LINK(v);
        uint32_t f = g->flags(g->ctx, v);
        uint32_t c = node_cost(g, v, f);
        ready_at(g, v, f, nl, st, aff);
        uint32_t s = st[best] > free_at[best] ? st[best] : free_at[best], fin;
        /* The runtime's own part first (PS_NODE_NS), then the body. */
        uint32_t b = sat_add(s, g->node_ns);
        uint32_t *w = g->scratch(g->ctx, v);
        if (w[PS_FINISH] && tail_counted) {
            /* In the tail, counted on list 0 already: its times are the
             * frame's, its list's end stays the period's. */
            fin = sat_add(b, c);
        } else if (f & PS_ELSEWHERE) {
            /* Its list claims it and goes on; another thread runs it. */
            free_at[best] = b;
            fin = sat_add(b, c);
        } else if ((f & PS_PARALLEL) && c > 0) {
            fin = share_parallel(g->xfer_ns, nl, best, b, c, free_at, r.busy);
        } else {
            fin = sat_add(b, c);
            free_at[best] = fin;
            r.busy[best] += c;
        }
        if (w[PS_FINISH] && !tail_counted) {
            /* A tail node before any other node of list 0 (a frame with
             * nothing else on it): it ran as it is, and counts no more. */
            uint32_t own = sat_add(g->node_ns, c);
            tail = tail > own ? tail - own : 0;
            tail_cost -= tail_cost > c ? c : tail_cost;
        } else if (!tail_counted && best == 0) {
            free_at[0] = sat_add(free_at[0], tail);
            r.busy[0] += tail_cost;
            tail_counted = true;
        }
        w[PS_START] = s;
        w[PS_FINISH] = fin;
        g->place(g->ctx, v, best);
        /* The frame ends when the caller (list 0) knows every last node
         * done: one elsewhere reaches it xfer_ns later. (A pipeline's
         * period: below.) */
        uint32_t end = best != 0 && g->nsucc(g->ctx, v) == 0 ? sat_add(fin, g->xfer_ns) : fin;
        if (r.last == PS_NONE || end > r.makespan) {
            r.makespan = end;
            r.last = v;
        }
    }
    if (pipe) {
        /* The period: the latest list's end, the tail counted on list 0
         * (r.last stays the frame's last node, for ps_crit_before). */
        r.makespan = 0;
        for (uint32_t k = 0; k < nl; k++)
            if (free_at[k] > r.makespan)
                r.makespan = free_at[k];
    }
    *out = r;
    return true;
}

uint32_t ps_crit_before(const ps_graph *g, uint32_t v, uint32_t prev_on_list)
{
    uint32_t start = g->scratch(g->ctx, v)[PS_START];
    if (start == 0)
        return PS_NONE;
    uint32_t k = g->list_of(g->ctx, v);
    /* The input whose arrival is the start, else the list's earlier node. */
    uint32_t np = g->npred(g->ctx, v);
    for (uint32_t q = 0; q < np; q++) {
        uint32_t p = g->pred(g->ctx, v, q);
        uint32_t fin = g->scratch(g->ctx, p)[PS_FINISH];
        if (g->list_of(g->ctx, p) != k)
            fin = sat_add(fin, g->xfer_ns);
        if (fin == start)
            return p;
    }
    return prev_on_list;
}
