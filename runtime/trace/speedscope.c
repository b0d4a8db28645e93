/*
 * trace/speedscope.c - the trace in speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json), written instead of
 * the Trace Event Format when the path ends in ".speedscope.json"
 * (trace/write.c chooses; docs/runtime.md "The built-in trace").
 *
 * speedscope names each Trace Event by its name and its args together, so
 * the default file's per-frame args make every event a symbol of its own.
 * Here a symbol is a node of a graph (or the recorder's idle span), one
 * evented profile per thread: its spans, which nest on one thread, as
 * opens and closes in time order.
 */
#include "ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"

/* One span of one thread, in ns, and its symbol. */
typedef struct span {
    uint64_t b, e;
    uint32_t sym;
} span;

static int by_begin_then_longest(const void *pa, const void *pb)
{
    const span *a = pa, *b = pb;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return a->e > b->e ? -1 : a->e < b->e;   /* the enclosing one opens first */
}

/* The symbol of (graph, name): its index in syms, added when new. */
static long sym_of(const ev ***syms, size_t *n, size_t *cap, const ev *e)
{
    for (size_t i = 0; i < *n; i++) {
        const ev *s = (*syms)[i];
        if ((s->name == e->name || strcmp(s->name, e->name) == 0) &&
            (s->cat == e->cat || strcmp(s->cat, e->cat) == 0))
            return (long)i;
    }
    if (*n == *cap) {
        const ev **ns = realloc((void *)*syms, (*cap = *cap ? *cap * 2 : 32) * sizeof *ns);
        if (!ns)
            return -1;
        *syms = ns;
    }
    (*syms)[*n] = e;
    return (long)(*n)++;
}

static uint64_t to_ns(uint64_t ticks, double k) { return (uint64_t)((double)ticks * k + 0.5); }

/* Spans only: an instant mark (steal, wake) and an I/O wait have no place
 * in a stack; nor has a spawned task, whose name and category are its
 * parent's (it would pass for that node). */
static bool in_stacks(const ev *e)
{
    return e->kind != EV_MARK && e->kind != EV_IO && e->kind != EV_TASK;
}

int rt_trace_put_speedscope(FILE *f, const rt_trace_pick *pick, size_t n, uint32_t nthreads,
                            uint32_t nworkers, double k)
{
    const ev **syms = NULL;
    size_t nsym = 0, symcap = 0;
    span *sp = malloc((n ? n : 1) * sizeof *sp);
    uint32_t *open = malloc((n ? n : 1) * sizeof *open);
    long *sym = malloc((n ? n : 1) * sizeof *sym);
    int rc = sp && open && sym ? 0 : DAGRT_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (in_stacks(pick[i].e) && (sym[i] = sym_of(&syms, &nsym, &symcap, pick[i].e)) < 0)
            rc = DAGRT_ENOMEM;
    if (rc == 0) {
        fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", f);
        fprintf(f, "\"exporter\":\"libdagrt %d.%d.%d\",\"name\":\"libdagrt trace\","
                   "\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[",   /* speedscope's word for its symbols */
                DAGRT_VERSION_MAJOR, DAGRT_VERSION_MINOR, DAGRT_VERSION_PATCH);
        /* A node's graph is its "file": two graphs' nodes of one name stay apart. */
        for (size_t i = 0; i < nsym; i++) {
            fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
            rt_trace_put_str(f, syms[i]->name);
            fputs(",\"file\":", f);
            rt_trace_put_str(f, syms[i]->cat);
            fputc('}', f);
        }
        fputs("]},\n\"profiles\":[", f);
        bool first = true;
        for (uint32_t t = 0; t < nthreads; t++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (pick[i].tid == t && in_stacks(pick[i].e)) {
                    const ev *e = pick[i].e;
                    /* begin and end each rounded, as in the other format */
                    sp[m++] = (span){to_ns(e->ts, k), to_ns(e->ts + e->dur, k), (uint32_t)sym[i]};
                }
            if (m == 0)
                continue;
            qsort(sp, m, sizeof *sp, by_begin_then_longest);
            uint64_t last = 0;
            for (size_t i = 0; i < m; i++)
                if (sp[i].e > last)
                    last = sp[i].e;
            char name[32];
            rt_trace_thread_name(nworkers, t, name, sizeof name);
            fprintf(f, "%s\n{\"type\":\"evented\",\"name\":\"%s\",\"unit\":\"nanoseconds\","
                       "\"startValue\":%llu,\"endValue\":%llu,\"events\":[",
                    first ? "" : ",", name, (unsigned long long)sp[0].b, (unsigned long long)last);
            first = false;
            /* Spans nest on a thread: a sweep with a stack closes each
             * one before anything that begins after its end opens. */
            size_t depth = 0;
            bool ev_first = true;
            for (size_t i = 0; i <= m; i++) {
                while (depth > 0 && (i == m || sp[open[depth - 1]].e <= sp[i].b)) {
                    const span *c = &sp[open[--depth]];
                    fprintf(f, "%s{\"type\":\"C\",\"frame\":%u,\"at\":%llu}", ev_first ? "" : ",",
                            c->sym, (unsigned long long)c->e);
                    ev_first = false;
                }
                if (i == m)
                    break;
                fprintf(f, "%s{\"type\":\"O\",\"frame\":%u,\"at\":%llu}", ev_first ? "" : ",",
                        sp[i].sym, (unsigned long long)sp[i].b);
                ev_first = false;
                open[depth++] = (uint32_t)i;
            }
            fputs("]}", f);
        }
        fputs("]}\n", f);
    }
    free((void *)syms);
    free(sp);
    free(open);
    free(sym);
    return rc;
}
