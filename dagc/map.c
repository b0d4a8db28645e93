/*
 * map.c - the open-addressing map from string to int (util.h).
 */
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    /* FNV's low bits (the ones a power-of-two table uses) mix poorly for
     * names that differ only in their last digits: fold the high bits in. */
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 32);
}

void dg_map_free(dg_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    m->keys = NULL;
    m->vals = NULL;
    m->hashes = NULL;
    m->cap = m->len = 0;
}

int dg_map_get(const dg_map *m, const char *key)
{
    if (!m->cap) return -1;
    size_t mask = m->cap - 1;
    uint64_t h = hash_str(key);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (!m->keys[i]) return -1;
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) return m->vals[i];
    }
}

static void map_grow(dg_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const char **ok = m->keys;
    int *ov = m->vals;
    uint64_t *oh = m->hashes;
    size_t ocap = m->cap;
    m->keys = dg_xcalloc(ncap, sizeof *m->keys);
    m->vals = dg_xcalloc(ncap, sizeof *m->vals);
    m->hashes = dg_xcalloc(ncap, sizeof *m->hashes);
    m->cap = ncap;
    m->len = ocap ? m->len : 0;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (!ok[i]) continue;
        size_t j = oh[i] & mask;
        while (m->keys[j]) j = (j + 1) & mask;
        m->keys[j] = ok[i];
        m->vals[j] = ov[i];
        m->hashes[j] = oh[i];
    }
    free(ok);
    free(ov);
    free(oh);
}

void dg_map_reserve(dg_map *m, size_t n)
{
    while ((n + 1) * 2 > m->cap) map_grow(m);
}

void dg_map_put(dg_map *m, const char *key, int val)
{
    if ((m->len + 1) * 2 > m->cap) map_grow(m);
    size_t mask = m->cap - 1;
    uint64_t h = hash_str(key);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (!m->keys[i]) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->hashes[i] = h;
            m->len++;
            return;
        }
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) {
            m->vals[i] = val;
            return;
        }
    }
}
