/*
 * template.h - a tiny template engine for dagc's C back end.
 *
 * Templates are text with tags:
 *   {{name}}              the value of name (looked up in the current item,
 *                         then in the enclosing ones)
 *   {{#name}} ... {{/name}}  a section: repeated once per item of list `name`,
 *                         or once if `name` is a non-empty value
 *   {{^name}} ... {{/name}}  an inverted section: once if `name` is missing,
 *                         an empty value or an empty list
 *   {{! comment }}        nothing
 * A tag alone on its line (only blanks around it) that is a section, inverted
 * section, end or comment takes the whole line with it, so templates can be
 * laid out readably without leaving blank lines in the output.
 *
 * The data is a tree of dictionaries (tpl_dict) built by the caller; the
 * engine never escapes anything (its output is C, not HTML).
 */
#ifndef DAGC_TEMPLATE_H
#define DAGC_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

typedef struct tpl_dict tpl_dict;

/* Output goes to dagc's growable byte buffer (util.h). */

/* Dictionaries: every dictionary made from a root is freed with the root. */
tpl_dict *tpl_dict_new(void);
void tpl_dict_free(tpl_dict *root);
/* Keys are not copied: they must outlive the tree (callers pass string
 * literals). */
/* Sets key to a copy of value (replacing an earlier value). */
void tpl_set(tpl_dict *d, const char *key, const char *value);
/* The same without the copy: value must outlive the tree (a literal, or a
 * string of the IR being rendered). */
void tpl_set_ref(tpl_dict *d, const char *key, const char *value);
void tpl_setf(tpl_dict *d, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(DG_PRINTF_FMT, 3, 4)))
#endif
    ;
/* Sets key to the decimal text of v. */
void tpl_set_int(tpl_dict *d, const char *key, long long v);
/* Appends a new item to list key (creating the list) and returns it. */
tpl_dict *tpl_add(tpl_dict *d, const char *key);

/* A list of n items made on demand: each time the list is rendered,
 * fill(ctx, i, item) sets the values of item i into a fresh dictionary
 * that lives only while that item is rendered. A list of a million nodes
 * then costs the memory of one. ctx must outlive the rendering. */
typedef void (*tpl_fill_fn)(void *ctx, size_t i, tpl_dict *item);
void tpl_add_lazy(tpl_dict *d, const char *key, size_t n, tpl_fill_fn fill, void *ctx);

/* Renders template text (named `name` in errors) with data d, appending to
 * out. On error returns false and writes "name:line: message" to err
 * (errlen bytes); out may then hold partial output, which callers discard. */
bool tpl_render(const char *name, const char *text, const tpl_dict *d,
                dg_buf *out, char *err, size_t errlen);

#endif /* DAGC_TEMPLATE_H */
