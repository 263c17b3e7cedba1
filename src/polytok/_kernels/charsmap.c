/* The precompiled-charsmap normalizer, compiled: polytok._kernels.charsmap.
 *
 * Semantics are those of polytok/normalizers/precompiled.py (`Precompiled.normalize`, HF
 * tokenizers 0.23.3 normalizers/precompiled.rs over the spm_precompiled crate) and of
 * polytok/normalizers/_sentencepiece_normalize.py (`LongestMatch.iter_fast_chunks` and
 * `sentencepiece_text`: sentencepiece 0.2.3 src/normalizer.cc, `Normalizer::Normalize`,
 * `NormalizePrefix`, `PrefixMatcher::PrefixMatch`). The algorithms are reproduced from those
 * files; no reference code is copied.
 *
 * A `Charsmap` holds the blob's Darts-clone double array (u32 units, read little-endian) and its
 * pool of NUL-terminated replacements, and, for sentencepiece, a byte trie of the user-defined
 * symbols that pass through unmapped. Two methods:
 *
 * - `sentencepiece(text, space, prefix, suffix, remove_extra)`: the `.model` path's normalize.
 *   The pure path's decisions are followed one for one, so that a hostile blob gives the same
 *   answer: the per-character "maps to itself" test reads units leniently (an index past the
 *   array is an empty unit, as `_continuations` does), the prefix walk strictly (where the pure
 *   path raises EncodeError).
 * - `grapheme(text, zone)`: HF's normalize. Outside the zones around joiner characters (the
 *   pure module's `_joined_zones`, with the class generated into charsmap_joiners.h) every
 *   character is its own cluster and is mapped here (the shortest key, `Charsmap.transform`);
 *   each zone's text comes from `zone(text, start, end)`, the pure path's own cluster code.
 *
 * Both return None where the kernel does not decide: anything the pure path would raise on
 * (an index past the array or the pool, a replacement starting inside a character, text that
 * is not UTF-8), or a match that ends inside a character. The caller then runs the pure path,
 * which gives its answer or its error. Every read of the blob is bounds-checked.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "charsmap_joiners.h"
#include "kernel_api.h"
#include "kernel_util.h"

#define GIL_FREE_BYTES 4096 /* texts at least this long are walked without the GIL */

/* -- output buffer (raw allocator: filled without the GIL) --------------------------- */

typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t cap;
    int failed; /* out of memory (reported once the GIL is held again) */
} Buffer;

static int buffer_reserve(Buffer *b, Py_ssize_t extra) {
    if (b->failed) return -1;
    if (extra <= b->cap - b->size) return 0;
    if (extra > PY_SSIZE_T_MAX - b->size) {
        b->failed = 1;
        return -1;
    }
    Py_ssize_t need = b->size + extra;
    Py_ssize_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *data = PyMem_RawRealloc(b->data, (size_t)cap);
    if (!data) {
        b->failed = 1;
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buffer_add(Buffer *b, const char *bytes, Py_ssize_t n) {
    if (n <= 0) return 0;
    if (buffer_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->size, bytes, (size_t)n);
    b->size += n;
    return 0;
}

/* -- the object ---------------------------------------------------------------------- */

typedef struct {
    int32_t child;   /* first child node, or -1 */
    int32_t sibling; /* next sibling node, or -1 */
    uint8_t byte;
    uint8_t terminal; /* a symbol ends here */
} SymbolNode;

typedef struct {
    PyObject_HEAD
    int has_trie;      /* 0: no charsmap at all (sentencepiece's identity normalizer) */
    uint32_t *units;
    Py_ssize_t n_units;
    char *pool;
    Py_ssize_t pool_size;
    SymbolNode *symbols; /* node 0 is the root; NULL when there are no symbols */
    Py_ssize_t n_symbols;
    int32_t root_child[256];
    int64_t ascii_kind[128]; /* `plainness` of each ASCII character, found once the tables are built */
} Charsmap;

#define LABEL_MASK 0x800000FFu
#define LEAF_BIT 0x100u
#define VALUE_MASK 0x7FFFFFFFu

/* darts-clone's offset of a unit */
static inline uint32_t unit_offset(uint32_t unit) {
    return (unit >> 10) << ((unit & 0x200u) >> 6);
}

static inline int is_continuation(unsigned char byte) {
    return (byte & 0xC0) == 0x80;
}

/* length of the UTF-8 character whose lead byte is `lead` (valid UTF-8 assumed) */
static inline Py_ssize_t utf8_length(unsigned char lead) {
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

static int64_t plainness(const Charsmap *self, const unsigned char *c, Py_ssize_t n);

static void Charsmap_dealloc(Charsmap *self) {
    PyMem_Free(self->units);
    PyMem_Free(self->pool);
    PyMem_Free(self->symbols);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int add_symbol(Charsmap *self, const unsigned char *bytes, Py_ssize_t n, Py_ssize_t *cap) {
    int32_t node = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t child = node == 0 ? self->root_child[bytes[i]] : self->symbols[node].child;
        int32_t found = -1;
        if (node == 0) {
            found = child;
        } else {
            for (int32_t c = child; c >= 0; c = self->symbols[c].sibling) {
                if (self->symbols[c].byte == bytes[i]) {
                    found = c;
                    break;
                }
            }
        }
        if (found < 0) {
            if (self->n_symbols >= INT32_MAX) {
                PyErr_NoMemory();
                return -1;
            }
            if (self->n_symbols == *cap) {
                if (*cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(SymbolNode)) {
                    PyErr_NoMemory();
                    return -1;
                }
                SymbolNode *grown = PyMem_Realloc(self->symbols, (size_t)(*cap * 2) * sizeof(SymbolNode));
                if (!grown) {
                    PyErr_NoMemory();
                    return -1;
                }
                self->symbols = grown;
                *cap *= 2;
            }
            found = (int32_t)self->n_symbols++;
            SymbolNode *s = &self->symbols[found];
            s->child = -1;
            s->byte = bytes[i];
            s->terminal = 0;
            if (node == 0) {
                s->sibling = -1;
                self->root_child[bytes[i]] = found;
            } else {
                s->sibling = self->symbols[node].child;
                self->symbols[node].child = found;
            }
        }
        node = found;
    }
    if (node != 0) self->symbols[node].terminal = 1;
    return 0;
}

static int load_units(Charsmap *self, const unsigned char *raw, Py_ssize_t size) {
    if (size < 4) {
        PyErr_SetString(PyExc_ValueError, "shorter than its 4-byte header");
        return -1;
    }
    uint32_t trie_size = (uint32_t)raw[0] | (uint32_t)raw[1] << 8 | (uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 24;
    Py_ssize_t n_units = (Py_ssize_t)(trie_size / 4);
    if (n_units > (size - 4) / 4) {
        PyErr_SetString(PyExc_ValueError, "trie larger than the blob");
        return -1;
    }
    Py_ssize_t pool_size = size - 4 - 4 * n_units;
    PyObject *check = PyUnicode_DecodeUTF8((const char *)raw + 4 + 4 * n_units, pool_size, NULL);
    if (!check) return -1; /* the pure reader refuses such a pool first */
    Py_DECREF(check);
    self->units = PyMem_Malloc((size_t)(n_units ? n_units : 1) * sizeof(uint32_t));
    self->pool = PyMem_Malloc((size_t)(pool_size ? pool_size : 1));
    if (!self->units || !self->pool) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n_units; i++) {
        const unsigned char *u = raw + 4 + 4 * i;
        self->units[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    if (pool_size) memcpy(self->pool, raw + 4 + 4 * n_units, (size_t)pool_size);
    self->n_units = n_units;
    self->pool_size = pool_size;
    self->has_trie = 1;
    return 0;
}

/* Copies the trie units and the pool of `blob` (any contiguous bytes buffer: bytes, or a view of
 * a file's bytes) into the Charsmap; 0, or -1 with an exception set. */
static int load_blob(Charsmap *self, PyObject *blob) {
    Py_buffer view;
    if (PyObject_GetBuffer(blob, &view, PyBUF_SIMPLE) < 0) {
        PyErr_SetString(PyExc_TypeError, "blob must be a bytes-like object or None");
        return -1;
    }
    int done = load_units(self, (const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return done;
}

/* Charsmap(blob: bytes-like | None, symbols: list[bytes])
 * blob None: no charsmap (only the symbols and the space rules apply). Each symbol is the UTF-8
 * of a user-defined piece, valid UTF-8 (the caller keeps the pure path otherwise). */
static int Charsmap_init(Charsmap *self, PyObject *args, PyObject *kwargs) {
    PyObject *blob, *symbols;
    if (!PyArg_ParseTuple(args, "OO!:Charsmap", &blob, &PyList_Type, &symbols)) return -1;
    if (self->units || self->pool || self->symbols || self->has_trie) {
        PyErr_SetString(PyExc_RuntimeError, "Charsmap is already initialised");
        return -1;
    }
    for (int b = 0; b < 256; b++) self->root_child[b] = -1;
    if (blob != Py_None && load_blob(self, blob) < 0)
        return -1;
    Py_ssize_t count = PyList_GET_SIZE(symbols);
    if (count > 0) {
        Py_ssize_t cap = 64;
        self->symbols = PyMem_Malloc((size_t)cap * sizeof(SymbolNode));
        if (!self->symbols) {
            PyErr_NoMemory();
            return -1;
        }
        self->symbols[0] = (SymbolNode){-1, -1, 0, 0};
        self->n_symbols = 1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(symbols); i++) {
            PyObject *s = PyList_GET_ITEM(symbols, i);
            if (!PyBytes_Check(s)) {
                PyErr_SetString(PyExc_TypeError, "symbols must be bytes");
                return -1;
            }
            if (add_symbol(self, (const unsigned char *)PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s), &cap) < 0)
                return -1;
        }
    }
    for (int b = 0; b < 128; b++) {
        unsigned char c = (unsigned char)b;
        self->ascii_kind[b] = plainness(self, &c, 1);
    }
    return 0;
}

/* -- sentencepiece ------------------------------------------------------------------- */

enum { PLAIN = -1, NOT_PLAIN = -2, UNDECIDED = -3 };

/* Whether the symbol trie holds the path of `bytes` (some symbol starts with them). */
static int symbol_path(const Charsmap *self, const unsigned char *bytes, Py_ssize_t n) {
    if (!self->symbols) return 0;
    int32_t node = self->root_child[bytes[0]];
    for (Py_ssize_t i = 1; node >= 0 && i < n; i++) {
        int32_t c = self->symbols[node].child;
        while (c >= 0 && self->symbols[c].byte != bytes[i]) c = self->symbols[c].sibling;
        node = c;
    }
    return node >= 0;
}

/* The pure `_continuations(raw)`: PLAIN (no key starts with `raw`), NOT_PLAIN (a key ends within
 * it), UNDECIDED (unit 0 is missing: the pure path raises), else the trie position from which the
 * keys longer than `raw` continue. Units past the array read as 0, as there. */
static int64_t continuations(const Charsmap *self, const unsigned char *raw, Py_ssize_t n) {
    if (self->n_units == 0) return UNDECIDED;
    uint32_t pos = unit_offset(self->units[0]);
    for (Py_ssize_t i = 0; i < n; i++) {
        pos ^= raw[i];
        uint32_t node = (Py_ssize_t)pos < self->n_units ? self->units[pos] : 0;
        if ((node & LABEL_MASK) != raw[i]) return PLAIN;
        pos ^= unit_offset(node);
        if (node & LEAF_BIT) return NOT_PLAIN;
    }
    return (int64_t)pos;
}

/* Whether `byte` continues a key from trie position `pos` (membership in the pure frozenset). */
static inline int continues(const Charsmap *self, uint32_t pos, unsigned char byte) {
    if (byte == 0) return 0;
    uint32_t at = pos ^ byte;
    return (Py_ssize_t)at < self->n_units && (self->units[at] & LABEL_MASK) == byte;
}

/* The pure `_plainness` of the character `c` (n bytes). */
static int64_t plainness(const Charsmap *self, const unsigned char *c, Py_ssize_t n) {
    if (symbol_path(self, c, n) || (n == 1 && c[0] == ' ')) return NOT_PLAIN;
    if (!self->has_trie) return PLAIN;
    return continuations(self, c, n);
}

typedef struct {
    const unsigned char *space;
    Py_ssize_t space_len;
    int remove_extra;
    int started;     /* a chunk past the leading spaces was met */
    int after_space; /* the previous kept chunk ended with a space (remove_extra only) */
} Spaces;

/* One chunk's new text through `sentencepiece_text`'s per-chunk rules. */
static int emit(Buffer *out, Spaces *sp, const unsigned char *text, Py_ssize_t n) {
    if (!sp->started) {
        if (sp->remove_extra && n == 1 && text[0] == ' ') return 0;
        sp->started = 1;
    }
    if (sp->after_space) {
        while (n > 0 && text[0] == ' ') {
            text++;
            n--;
        }
    }
    if (n == 0) return 0;
    sp->after_space = sp->remove_extra && text[n - 1] == ' ';
    Py_ssize_t from = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (text[i] == ' ') {
            if (buffer_add(out, (const char *)text + from, i - from) < 0) return -1;
            if (buffer_add(out, (const char *)sp->space, sp->space_len) < 0) return -1;
            from = i + 1;
        }
    }
    return buffer_add(out, (const char *)text + from, n - from);
}

/* `emit` for a run of characters that map to themselves (never " ", never a space inside). */
static inline int emit_plain(Buffer *out, Spaces *sp, const unsigned char *text, Py_ssize_t n) {
    sp->started = 1;
    sp->after_space = 0;
    if (n > out->cap - out->size) return buffer_add(out, (const char *)text, n);
    memcpy(out->data + out->size, text, (size_t)n);
    out->size += n;
    return 0;
}

/* `emit` for a chunk " " that maps to itself. */
static inline int emit_space(Buffer *out, Spaces *sp) {
    if (!sp->started) {
        if (sp->remove_extra) return 0;
        sp->started = 1;
    }
    if (sp->after_space) return 0;
    sp->after_space = sp->remove_extra;
    if (sp->space_len > out->cap - out->size) return buffer_add(out, (const char *)sp->space, sp->space_len);
    memcpy(out->data + out->size, sp->space, (size_t)sp->space_len);
    out->size += sp->space_len;
    return 0;
}

typedef enum { DONE = 0, FALLBACK = 1, NO_MEMORY = 2 } Outcome;

/* One `_step` at byte `at` (whole symbols, then the longest key, then one character):
 * *length bytes consumed, *new / *new_len their replacement. FALLBACK where the pure path raises
 * or the pieces could not be decoded alone. */
static Outcome step(const Charsmap *self, const unsigned char *data, Py_ssize_t size, Py_ssize_t at,
                    Py_ssize_t *length, const unsigned char **new, Py_ssize_t *new_len) {
    if (self->symbols) {
        Py_ssize_t walked = 0, whole = 0;
        int32_t node = self->root_child[data[at]];
        while (node >= 0) {
            walked++;
            if (self->symbols[node].terminal) whole = walked;
            if (at + walked >= size) break;
            int32_t c = self->symbols[node].child;
            while (c >= 0 && self->symbols[c].byte != data[at + walked]) c = self->symbols[c].sibling;
            node = c;
        }
        if (whole) {
            *length = whole;
            *new = data + at;
            *new_len = whole;
            return DONE;
        }
    }
    if (self->has_trie) {
        if (self->n_units == 0) return FALLBACK;
        uint32_t pos = unit_offset(self->units[0]);
        Py_ssize_t best = 0;
        uint32_t index = 0;
        for (Py_ssize_t i = at; i < size; i++) {
            unsigned char byte = data[i];
            if (byte == 0) break;
            pos ^= byte;
            if ((Py_ssize_t)pos >= self->n_units) return FALLBACK;
            uint32_t node = self->units[pos];
            if ((node & LABEL_MASK) != byte) break;
            pos ^= unit_offset(node);
            if (node & LEAF_BIT) {
                if ((Py_ssize_t)pos >= self->n_units) return FALLBACK;
                best = i - at + 1;
                index = self->units[pos] & VALUE_MASK;
            }
        }
        if (best) {
            if ((Py_ssize_t)index >= self->pool_size) return FALLBACK;
            const char *start = self->pool + index;
            const char *nul = memchr(start, 0, (size_t)(self->pool_size - (Py_ssize_t)index));
            if (!nul) return FALLBACK;
            if (nul > start && is_continuation((unsigned char)*start)) return FALLBACK;
            if (at + best < size && is_continuation(data[at + best])) return FALLBACK;
            *length = best;
            *new = (const unsigned char *)start;
            *new_len = nul - start;
            return DONE;
        }
    }
    Py_ssize_t n = utf8_length(data[at]);
    if (n > size - at) return FALLBACK;
    *length = n;
    *new = data + at;
    *new_len = n;
    return DONE;
}

/* `iter_fast_chunks` + `sentencepiece_text` over valid UTF-8. */
static Outcome sentencepiece_walk(const Charsmap *self, const unsigned char *data, Py_ssize_t size,
                                  Spaces *sp, int prefix, int suffix, Buffer *out) {
    if (prefix && buffer_add(out, (const char *)sp->space, sp->space_len) < 0) return NO_MEMORY;
    int space_plain = -1; /* `_space_plain`, found when first needed */
    Py_ssize_t at = 0;
    while (at < size) {
        Py_ssize_t end = at;
        while (end < size) {
            Py_ssize_t n = 1;
            int64_t kind;
            if (data[end] < 0x80) {
                kind = self->ascii_kind[data[end]];
            } else {
                n = utf8_length(data[end]);
                if (n > size - end) return FALLBACK;
                kind = plainness(self, data + end, n);
            }
            if (kind == UNDECIDED) return FALLBACK;
            if (kind == NOT_PLAIN) break;
            if (kind >= 0 && end + n < size && continues(self, (uint32_t)kind, data[end + n])) break;
            end += n;
        }
        if (end > at) {
            if (emit_plain(out, sp, data + at, end - at) < 0) return NO_MEMORY;
            at = end;
            continue;
        }
        if (data[at] == ' ') {
            if (space_plain < 0) {
                static const unsigned char blank[1] = {' '};
                int64_t kind = PLAIN;
                if (symbol_path(self, blank, 1)) kind = NOT_PLAIN;
                else if (self->has_trie) kind = continuations(self, blank, 1);
                if (kind == UNDECIDED) return FALLBACK;
                space_plain = kind == PLAIN;
            }
            if (space_plain) {
                if (emit_space(out, sp) < 0) return NO_MEMORY;
                at++;
                continue;
            }
        }
        Py_ssize_t length;
        const unsigned char *new;
        Py_ssize_t new_len;
        Outcome o = step(self, data, size, at, &length, &new, &new_len);
        if (o != DONE) return o;
        if (emit(out, sp, new, new_len) < 0) return NO_MEMORY;
        at += length;
    }
    if (sp->remove_extra) {
        if (!sp->started) {
            out->size = 0;
            return DONE;
        }
        while (out->size >= sp->space_len &&
               memcmp(out->data + out->size - sp->space_len, sp->space, (size_t)sp->space_len) == 0)
            out->size -= sp->space_len;
    }
    if (suffix && buffer_add(out, (const char *)sp->space, sp->space_len) < 0) return NO_MEMORY;
    return DONE;
}

static PyObject *finish(Buffer *out, Outcome outcome) {
    PyObject *result;
    if (outcome == NO_MEMORY || out->failed) result = PyErr_NoMemory();
    else if (outcome == FALLBACK) result = Py_NewRef(Py_None);
    else result = PyUnicode_DecodeUTF8(out->data ? out->data : "", out->size, NULL);
    PyMem_RawFree(out->data);
    return result;
}

/* sentencepiece(text, space, prefix, suffix, remove_extra) -> str | None */
static PyObject *Charsmap_sentencepiece(Charsmap *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyUnicode_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "sentencepiece(text: str, space: str, prefix, suffix, remove_extra)");
        return NULL;
    }
    int prefix = PyObject_IsTrue(args[2]), suffix = PyObject_IsTrue(args[3]), remove_extra = PyObject_IsTrue(args[4]);
    if (prefix < 0 || suffix < 0 || remove_extra < 0) return NULL;
    Py_ssize_t space_len;
    const char *space = PyUnicode_AsUTF8AndSize(args[1], &space_len);
    if (!space) return NULL;
    if (space_len == 0) return Py_NewRef(Py_None); /* never built so; the pure rules decide */
    PyObject *text = args[0], *encoded = NULL;
    const unsigned char *data;
    Py_ssize_t size;
    if (PyUnicode_IS_ASCII(text)) {
        data = PyUnicode_1BYTE_DATA(text);
        size = PyUnicode_GET_LENGTH(text);
    } else {
        encoded = PyUnicode_AsUTF8String(text);
        if (!encoded) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return NULL;
            PyErr_Clear(); /* lone surrogates: the pure path raises its own error */
            return Py_NewRef(Py_None);
        }
        data = (const unsigned char *)PyBytes_AS_STRING(encoded);
        size = PyBytes_GET_SIZE(encoded);
    }
    Buffer out = {NULL, 0, 0, 0};
    Spaces sp = {(const unsigned char *)space, space_len, remove_extra, 0, remove_extra};
    Outcome outcome;
    if (buffer_reserve(&out, size + size / 2 + 16) < 0) {
        outcome = NO_MEMORY;
    } else if (size >= GIL_FREE_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        outcome = sentencepiece_walk(self, data, size, &sp, prefix, suffix, &out);
        Py_END_ALLOW_THREADS
    } else {
        outcome = sentencepiece_walk(self, data, size, &sp, prefix, suffix, &out);
    }
    Py_XDECREF(encoded);
    return finish(&out, outcome);
}

/* The capsule's `sentencepiece` (kernel_api.h): `Charsmap_sentencepiece` on UTF-8, without the GIL. */
static int api_sentencepiece(PyObject *charsmap, const unsigned char *text, Py_ssize_t size,
                             const unsigned char *space, Py_ssize_t space_len, int prefix, int suffix,
                             int remove_extra, char **out, Py_ssize_t *out_size) {
    *out = NULL;
    *out_size = 0;
    if (space_len <= 0) return 1;
    Buffer buf = {NULL, 0, 0, 0};
    Spaces sp = {space, space_len, remove_extra, 0, remove_extra};
    Outcome outcome = NO_MEMORY;
    if (size <= (PY_SSIZE_T_MAX - 16) / 2 && buffer_reserve(&buf, size + size / 2 + 16) == 0)
        outcome = sentencepiece_walk((const Charsmap *)charsmap, text, size, &sp, prefix, suffix, &buf);
    if (outcome == DONE && !buf.failed) {
        *out = buf.data;
        *out_size = buf.size;
        return 0;
    }
    PyMem_RawFree(buf.data);
    return outcome == FALLBACK ? 1 : -1;
}

/* -- HF grapheme path ---------------------------------------------------------------- */

static uint8_t bmp_joiner[0x10000 / 8];

static void fill_joiner_bitmap(void) {
    for (int r = 0; r < JOINER_RANGE_COUNT; r++) {
        for (uint32_t cp = joiner_ranges[r][0]; cp <= joiner_ranges[r][1] && cp < 0x10000; cp++)
            bmp_joiner[cp >> 3] |= (uint8_t)(1u << (cp & 7));
    }
}

static int is_joiner(Py_UCS4 cp) {
    if (cp < 0x10000) return (bmp_joiner[cp >> 3] >> (cp & 7)) & 1;
    int lo = 0, hi = JOINER_RANGE_COUNT - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < joiner_ranges[mid][0]) hi = mid - 1;
        else if (cp > joiner_ranges[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* `Charsmap.transform` of one character (its `n` UTF-8 bytes): DONE with *new NULL when no key
 * is a prefix of it; FALLBACK where the pure path raises. */
static Outcome transform_char(const Charsmap *self, const unsigned char *c, int n, const char **new,
                              Py_ssize_t *new_len) {
    *new = NULL;
    if (self->n_units == 0) return FALLBACK;
    uint32_t pos = unit_offset(self->units[0]);
    for (int i = 0; i < n; i++) {
        if (c[i] == 0) return DONE;
        pos ^= c[i];
        if ((Py_ssize_t)pos >= self->n_units) return FALLBACK;
        uint32_t node = self->units[pos];
        if ((node & LABEL_MASK) != c[i]) return DONE;
        pos ^= unit_offset(node);
        if (node & LEAF_BIT) {
            if ((Py_ssize_t)pos >= self->n_units) return FALLBACK;
            Py_ssize_t index = (Py_ssize_t)(self->units[pos] & VALUE_MASK);
            if (index > self->pool_size) return FALLBACK;
            const char *start = self->pool + index;
            const char *nul = index < self->pool_size ? memchr(start, 0, (size_t)(self->pool_size - index)) : NULL;
            const char *end = nul ? nul : self->pool + self->pool_size;
            if (end > start && is_continuation((unsigned char)*start)) return FALLBACK;
            *new = start;
            *new_len = end - start;
            return DONE;
        }
    }
    return DONE;
}

/* Characters [from, to) of the text, each its own cluster, into `out`. */
static Outcome map_plain(const Charsmap *self, int kind, const void *text, Py_ssize_t from, Py_ssize_t to,
                         Buffer *out) {
    for (Py_ssize_t i = from; i < to; i++) {
        Py_UCS4 cp = PyUnicode_READ(kind, text, i);
        if (cp >= 0xD800 && cp < 0xE000) return FALLBACK; /* the pure path cannot encode it */
        unsigned char c[4];
        int n = utf8_encode(cp, c);
        const char *new;
        Py_ssize_t new_len;
        if (transform_char(self, c, n, &new, &new_len) != DONE) return FALLBACK;
        if (new ? buffer_add(out, new, new_len) : buffer_add(out, (const char *)c, n)) return NO_MEMORY;
    }
    return DONE;
}

static Outcome map_plain_released(const Charsmap *self, int kind, const void *text, Py_ssize_t from,
                                  Py_ssize_t to, Buffer *out) {
    Outcome o;
    if (to - from >= GIL_FREE_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        o = map_plain(self, kind, text, from, to, out);
        Py_END_ALLOW_THREADS
    } else {
        o = map_plain(self, kind, text, from, to, out);
    }
    return o;
}

/* grapheme(text, zone) -> str | None; zone(text, start, end) -> str maps one zone's clusters. */
static PyObject *Charsmap_grapheme(Charsmap *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "grapheme(text: str, zone)");
        return NULL;
    }
    if (!self->has_trie) return Py_NewRef(Py_None);
    PyObject *text = args[0], *zone = args[1];
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Buffer out = {NULL, 0, 0, 0};
    if (buffer_reserve(&out, n + n / 8 + 16) < 0) return finish(&out, NO_MEMORY);
    /* the zones of `_joined_zones`: each joiner at j covers [j - 1, j + 2), merged while they overlap */
    Py_ssize_t prev = 0, j = 0;
    while (j < n && !is_joiner(PyUnicode_READ(kind, data, j))) j++;
    while (j < n) {
        Py_ssize_t start = j > 0 ? j - 1 : 0, end = j + 2 < n ? j + 2 : n;
        Py_ssize_t k = j + 1;
        for (;;) {
            while (k < n && !is_joiner(PyUnicode_READ(kind, data, k))) k++;
            if (k >= n || k - 1 >= end) break;
            end = k + 2 < n ? k + 2 : n;
            k++;
        }
        Outcome o = map_plain_released(self, kind, data, prev, start, &out);
        if (o != DONE) return finish(&out, o);
        PyObject *mapped = PyObject_CallFunction(zone, "Onn", text, start, end);
        if (!mapped) {
            PyMem_RawFree(out.data);
            return NULL;
        }
        if (!PyUnicode_Check(mapped)) {
            Py_DECREF(mapped);
            PyMem_RawFree(out.data);
            PyErr_SetString(PyExc_TypeError, "zone() must return str");
            return NULL;
        }
        Py_ssize_t len;
        const char *utf8 = PyUnicode_AsUTF8AndSize(mapped, &len);
        if (!utf8) {
            Py_DECREF(mapped);
            PyMem_RawFree(out.data);
            return NULL;
        }
        int failed = buffer_add(&out, utf8, len);
        Py_DECREF(mapped);
        if (failed) return finish(&out, NO_MEMORY);
        prev = end;
        j = k;
    }
    return finish(&out, map_plain_released(self, kind, data, prev, n, &out));
}

/* is_joiner(cp) -> bool, for the tests (the class against `_JOINER`) */
static PyObject *module_is_joiner(PyObject *module, PyObject *arg) {
    unsigned long cp = PyLong_AsUnsignedLong(arg);
    if (cp == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    return PyBool_FromLong(cp < 0x110000 && is_joiner((Py_UCS4)cp));
}

static PyMethodDef Charsmap_methods[] = {
    {"sentencepiece", (PyCFunction)(void (*)(void))Charsmap_sentencepiece, METH_FASTCALL,
     "sentencepiece(text, space, prefix, suffix, remove_extra) -> str | None: sentencepiece's normalize, "
     "None where the pure path must decide."},
    {"grapheme", (PyCFunction)(void (*)(void))Charsmap_grapheme, METH_FASTCALL,
     "grapheme(text, zone) -> str | None: HF's Precompiled normalize, zones through zone(text, start, end)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CharsmapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.charsmap.Charsmap",
    .tp_basicsize = sizeof(Charsmap),
    .tp_dealloc = (destructor)Charsmap_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Charsmap(blob: bytes | None, symbols: list[bytes]): a precompiled charsmap and pass-through symbols.",
    .tp_methods = Charsmap_methods,
    .tp_init = (initproc)Charsmap_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef module_methods[] = {
    {"is_joiner", module_is_joiner, METH_O, "is_joiner(cp) -> bool: the joiner class of the zones."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef charsmap_module = {
    PyModuleDef_HEAD_INIT, "polytok._kernels.charsmap",
    "The precompiled-charsmap normalizer (sentencepiece and HF rules), compiled.", -1, module_methods,
};

PyMODINIT_FUNC PyInit_charsmap(void) {
    fill_joiner_bitmap();
    if (PyType_Ready(&CharsmapType) < 0) return NULL;
    PyObject *m = PyModule_Create(&charsmap_module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Charsmap", (PyObject *)&CharsmapType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    static CharsmapAPI api;
    api.type = &CharsmapType;
    api.sentencepiece = api_sentencepiece;
    PyObject *capsule = PyCapsule_New(&api, CHARSMAP_API_NAME, NULL);
    if (!capsule || PyModule_AddObjectRef(m, "_C_API", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(capsule);
    return m;
}
