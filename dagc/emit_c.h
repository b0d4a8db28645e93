/*
 * emit_c.h - dagc's C back end: the IR becomes a header (what the user
 * implements) and a source file (const tables of dagrt.h's descriptor types
 * and typed trampolines), rendered through the templates in templates/.
 */
#ifndef DAGC_EMIT_C_H
#define DAGC_EMIT_C_H

#include <stdbool.h>
#include <stddef.h>

#include "ir.h"
#include "template.h"

typedef struct emit_c_templates {
    const char *header;       /* text of header.h.tpl */
    const char *source;       /* text of source.c.tpl */
    const char *header_name;  /* names for errors */
    const char *source_name;
    bool cxx;                 /* the C++ back end: C++ source, C++ context types */
} emit_c_templates;

/* The templates built into dagc (templates/ at build time). */
void emit_c_builtin_templates(emit_c_templates *t);

/* Templates larger than this are refused (a template is a page or two). */
#define EMIT_C_MAX_TEMPLATE ((size_t)1 << 20)

/* Reads DIR/header.h.tpl and DIR/source.c.tpl (--templates DIR): regular
 * files (symlinks followed) of at most EMIT_C_MAX_TEMPLATE bytes. The texts
 * are malloc'd; free them with emit_c_free_templates. */
bool emit_c_load_templates(const char *dir, emit_c_templates *t, char *err, size_t errlen);
void emit_c_free_templates(emit_c_templates *t);

/* The same for the C++ back end (dagc --cxx): header.h.tpl and
 * source.cpp.tpl, and the context type taken as a C++ type-id. */
void emit_cxx_builtin_templates(emit_c_templates *t);
bool emit_cxx_load_templates(const char *dir, emit_c_templates *t, char *err, size_t errlen);

/* Renders prog into h (the header) and c (the source). header_name is the
 * name the source uses to #include the header (usually its base name). The
 * output depends only on the arguments: same input, same bytes. */
bool emit_c(const ir_program *prog, const char *header_name, const char *source_name,
            const emit_c_templates *t, dg_buf *h, dg_buf *c, char *err, size_t errlen);

#endif /* DAGC_EMIT_C_H */
