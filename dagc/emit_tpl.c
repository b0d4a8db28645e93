/*
 * emit_tpl.c - the C and C++ back ends' templates: the ones built into dagc
 * (templates/ at build time) and a pair read from a folder (--templates
 * DIR). emit_c.c renders them.
 */
#include "emit_c.h"

#include <stdlib.h>
#include <string.h>

/* Generated at build time from the .tpl files in templates/. */
extern const char dagc_tpl_header_h[];
extern const char dagc_tpl_source_c[];
extern const char dagc_tpl_source_cpp[];

void emit_c_builtin_templates(emit_c_templates *t)
{
    t->header = dagc_tpl_header_h;
    t->source = dagc_tpl_source_c;
    t->header_name = "header.h.tpl";
    t->source_name = "source.c.tpl";
    t->cxx = false;
}

/* Reads DIR/HNAME and DIR/SNAME into t (--templates DIR). */
static bool load_pair(const char *dir, const char *hname, const char *sname, bool cxx,
                      emit_c_templates *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    dg_buf hp = {0}, cp = {0};
    dg_buf_printf(&hp, "%s/%s", dir, hname);
    dg_buf_printf(&cp, "%s/%s", dir, sname);
    char *h = NULL, *c = NULL;
    size_t len;
    if (dg_read_file(hp.p, EMIT_C_MAX_TEMPLATE, 1, &h, &len, err, errlen) == 0)
        (void)dg_read_file(cp.p, EMIT_C_MAX_TEMPLATE, 1, &c, &len, err, errlen);
    if (!h || !c) {
        free(h);
        dg_buf_free(&hp);
        dg_buf_free(&cp);
        return false;
    }
    t->header = h;
    t->source = c;
    t->header_name = hp.p;
    t->source_name = cp.p;
    t->cxx = cxx;
    return true;
}

bool emit_c_load_templates(const char *dir, emit_c_templates *t, char *err, size_t errlen)
{
    return load_pair(dir, "header.h.tpl", "source.c.tpl", false, t, err, errlen);
}

void emit_c_free_templates(emit_c_templates *t)
{
    free((char *)t->header);
    free((char *)t->source);
    free((char *)t->header_name);
    free((char *)t->source_name);
    memset(t, 0, sizeof *t);
}

/* ---- the C++ back end (--cxx): the same header, the source through
 * source.cpp.tpl (emit_c.c reads the context type as a C++ type-id). */

void emit_cxx_builtin_templates(emit_c_templates *t)
{
    emit_c_builtin_templates(t);
    t->source = dagc_tpl_source_cpp;
    t->source_name = "source.cpp.tpl";
    t->cxx = true;
}

bool emit_cxx_load_templates(const char *dir, emit_c_templates *t, char *err, size_t errlen)
{
    return load_pair(dir, "header.h.tpl", "source.cpp.tpl", true, t, err, errlen);
}
