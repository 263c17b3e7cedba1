/* polytok._kernels.batch: many texts through the compiled stages in one call, without the GIL.
 *
 * `Pipeline(normalizer, space, prefix, suffix, remove_extra, split, model)` chains the stage
 * kernels of one tokenizer whose every stage has one (`Tokenizer.encode_batch` decides that,
 * from each stage's `batch_kernel()`):
 *
 * - normalizer: a `charsmap.Charsmap` run with sentencepiece's rules (`Precompiled.normalize`
 *   with a longest-match table) and its space settings, a `(pattern, content)` tuple (the
 *   `Replace` of a literal: `str.replace`), or None;
 * - split: "" (none); one character c: the pre-tokenizer `Split("c+", merged_with_next)`,
 *   which cuts the text before every run of c but at its start; or an int: a scanner of
 *   `split.SCANNERS` (`findall` of a known pattern, `regex.scanners`);
 * - model: a `spm_merge.Merger` (each word), a `bpe_merge.Merger` (each word, cut into chunks
 *   as `BPE._cut` does; a byte_level one merges each word's UTF-8 bytes, tiktoken's rule) or a
 *   `unigram.Lattice` (the whole text);
 * - stops (optional): characters a text must not hold (the first characters of the added tokens
 *   that could cut it); a text holding one goes to the pure path.
 *
 * They are called through the C entry points their modules offer (kernel_api.h), which touch no
 * Python object, so `encode(texts, start, stop)` reads the texts, runs every stage on each and
 * writes the ids with the GIL released, and several threads can run it at once on different
 * slices of one batch. A text a stage does not decide (kernel_api.h's 1) comes back as None, and
 * the caller encodes it with the pure pipeline, which gives its ids or raises its error; so does
 * a text holding a lone surrogate. The stage order is `Tokenizer._text_ids`' for a text with no
 * special token: normalize the whole text, pre-tokenize it, then the model on each word.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "kernel_api.h"
#include "kernel_util.h"

enum { MODEL_SPM = 1, MODEL_UNIGRAM = 2, MODEL_BPE = 3 };

typedef int (*WordIds)(PyObject *model, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count);
enum { LINE_DONE = 0, LINE_PURE = 1 };

/* -- growable arrays (raw allocator: grown without the GIL) --------------------------- */

typedef struct {
    void *data;
    Py_ssize_t cap; /* in items */
} Grow;

/* Room for `need` items of `size` bytes; -1 when out of memory (or past PY_SSIZE_T_MAX). */
static int grow(Grow *g, Py_ssize_t need, size_t size) {
    if (need <= g->cap) return 0;
    Py_ssize_t cap = g->cap ? g->cap : 256;
    while (cap < need) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    if ((size_t)cap > (size_t)PY_SSIZE_T_MAX / size) return -1;
    void *data = PyMem_RawRealloc(g->data, (size_t)cap * size);
    if (!data) return -1;
    g->data = data;
    g->cap = cap;
    return 0;
}

/* -- the word cache ---------------------------------------------------------------------- */

/* A word cache (per-word models): words of at most CACHED_CHARS code points and their ids, in
 * an open-addressing table over two pools. Emptied when half full. The pipeline keeps one across
 * calls; a call takes it (with the GIL held) when no other call holds it, else it fills one of
 * its own, dropped at its end: a cache is only ever used by one thread at a time. */
#define CACHED_CHARS 48
#define CACHE_SLOTS_MIN ((Py_ssize_t)1 << 12)
#define CACHE_SLOTS_MAX ((Py_ssize_t)1 << 17)

typedef struct {
    uint32_t hash;
    int32_t n_cps; /* 0: empty slot */
    int32_t cps_at, ids_at, n_ids;
} CacheSlot;

typedef struct WordCache {
    CacheSlot *slots;
    Py_ssize_t n_slots, used;
    Grow cps;   /* Py_UCS4 */
    Grow ids;   /* int32_t */
    Py_ssize_t cps_used, ids_used;
} WordCache;

static void cache_free(WordCache *c) {
    PyMem_RawFree(c->slots);
    PyMem_RawFree(c->cps.data);
    PyMem_RawFree(c->ids.data);
}

/* -- the object ---------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *normalizer; /* a Charsmap, or NULL */
    Py_UCS4 *replace;     /* or a literal replace: the pattern's code points, then the content's (raw-allocated) */
    Py_ssize_t pattern_len, content_len;
    int any_stops;        /* a text holding one of the stops goes to the pure path */
    uint64_t ascii_stops[2];
    Py_UCS4 *stops;       /* the others (raw-allocated) */
    Py_ssize_t n_stops;
    char *space;          /* its space's UTF-8 (raw-allocated) */
    Py_ssize_t space_len;
    int prefix, suffix, remove_extra;
    Py_UCS4 split;        /* 0: no cut before runs */
    Py_ssize_t scanner;   /* -1: no scanner */
    PyObject *model;
    int model_kind;
    const CharsmapAPI *charsmap_api;
    const SpmMergeAPI *spm_api;
    const BpeMergeAPI *bpe_api;
    WordIds word_ids;     /* per-word models: the model's entry */
    const UnigramAPI *unigram_api;
    const SplitAPI *split_api;
    PyObject **ints;      /* ints[id]: one shared int object per id met so far (NULL: not yet) */
    Py_ssize_t n_ints;
    struct WordCache *kept; /* the word cache kept across calls (per-word models), NULL while a call holds it */
} Pipeline;

#define MAX_SHARED_ID (1 << 24) /* larger ids get an int object each */

static void Pipeline_dealloc(Pipeline *self) {
    for (Py_ssize_t i = 0; i < self->n_ints; i++) Py_XDECREF(self->ints[i]);
    PyMem_Free(self->ints);
    if (self->kept) cache_free(self->kept);
    PyMem_RawFree(self->kept);
    Py_XDECREF(self->normalizer);
    PyMem_RawFree(self->replace);
    PyMem_RawFree(self->stops);
    Py_XDECREF(self->model);
    PyMem_RawFree(self->space);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Pipeline_init(Pipeline *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"normalizer", "space", "prefix", "suffix", "remove_extra", "split", "model", "stops", NULL};
    PyObject *stops = NULL;
    PyObject *normalizer, *model;
    PyObject *split;
    const char *space;
    Py_ssize_t space_len;
    int prefix, suffix, remove_extra;
    if (self->model) {
        PyErr_SetString(PyExc_RuntimeError, "Pipeline is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os#pppOO|U", kwlist, &normalizer, &space, &space_len, &prefix,
                                     &suffix, &remove_extra, &split, &model, &stops))
        return -1;
    if (stops && !self->stops) {
        Py_ssize_t n_stops = PyUnicode_GET_LENGTH(stops);
        self->stops = PyMem_RawMalloc((size_t)(n_stops ? n_stops : 1) * sizeof(Py_UCS4));
        if (!self->stops) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < n_stops; i++) {
            Py_UCS4 c = PyUnicode_READ_CHAR(stops, i);
            if (c < 128) {
                self->ascii_stops[c >> 6] |= (uint64_t)1 << (c & 63);
            } else {
                self->stops[self->n_stops++] = c;
            }
        }
        self->any_stops = n_stops > 0;
    }
    if (PyTuple_Check(normalizer)) {
        PyObject *pattern, *content;
        if (self->replace || !PyArg_ParseTuple(normalizer, "UU", &pattern, &content)) {
            PyErr_SetString(PyExc_TypeError, "a replace normalizer is (pattern: str, content: str)");
            return -1;
        }
        Py_ssize_t pattern_len = PyUnicode_GET_LENGTH(pattern), content_len = PyUnicode_GET_LENGTH(content);
        if (pattern_len == 0) {
            PyErr_SetString(PyExc_ValueError, "the replace pattern must not be empty");
            return -1;
        }
        self->replace = PyMem_RawMalloc((size_t)(pattern_len + content_len) * sizeof(Py_UCS4));
        if (!self->replace) {
            PyErr_NoMemory();
            return -1;
        }
        if (!PyUnicode_AsUCS4(pattern, self->replace, pattern_len, 0) ||
            (content_len && !PyUnicode_AsUCS4(content, self->replace + pattern_len, content_len, 0)))
            return -1;
        self->pattern_len = pattern_len;
        self->content_len = content_len;
        normalizer = Py_None;
    } else if (normalizer != Py_None) {
        self->charsmap_api = PyCapsule_Import(CHARSMAP_API_NAME, 0);
        if (!self->charsmap_api) return -1;
        if (!PyObject_TypeCheck(normalizer, self->charsmap_api->type)) {
            PyErr_SetString(PyExc_TypeError, "normalizer must be a charsmap.Charsmap, a (pattern, content) tuple or None");
            return -1;
        }
        if (space_len == 0) {
            PyErr_SetString(PyExc_ValueError, "the normalizer's space must not be empty");
            return -1;
        }
    }
    Py_UCS4 split_cp = 0;
    Py_ssize_t scanner = -1;
    if (PyLong_Check(split)) {
        scanner = PyLong_AsSsize_t(split);
        if (scanner == -1 && PyErr_Occurred()) return -1;
        self->split_api = PyCapsule_Import(SPLIT_API_NAME, 0);
        if (!self->split_api) return -1;
        if (scanner < 0 || scanner >= self->split_api->n_scanners) {
            PyErr_Format(PyExc_ValueError, "no scanner %zd", scanner);
            return -1;
        }
    } else if (PyUnicode_Check(split)) {
        Py_ssize_t split_chars = PyUnicode_GET_LENGTH(split);
        split_cp = split_chars == 1 ? PyUnicode_READ_CHAR(split, 0) : 0;
        if (split_chars > 1 || (split_chars == 1 && split_cp == 0)) {
            PyErr_SetString(PyExc_ValueError, "split must be \"\", one character other than NUL, or a scanner");
            return -1;
        }
    } else {
        PyErr_SetString(PyExc_TypeError, "split must be a str or a scanner (int)");
        return -1;
    }
    PyObject *module_name = PyObject_GetAttrString((PyObject *)Py_TYPE(model), "__module__");
    if (!module_name) return -1;
    int is_spm = PyUnicode_CompareWithASCIIString(module_name, "polytok._kernels.spm_merge") == 0;
    int is_unigram = PyUnicode_CompareWithASCIIString(module_name, "polytok._kernels.unigram") == 0;
    int is_bpe = PyUnicode_CompareWithASCIIString(module_name, "polytok._kernels.bpe_merge") == 0;
    Py_DECREF(module_name);
    if (is_spm) {
        self->spm_api = PyCapsule_Import(SPM_MERGE_API_NAME, 0);
        if (!self->spm_api) return -1;
        if (!PyObject_TypeCheck(model, self->spm_api->type)) is_spm = 0;
    } else if (is_unigram) {
        self->unigram_api = PyCapsule_Import(UNIGRAM_API_NAME, 0);
        if (!self->unigram_api) return -1;
        if (!PyObject_TypeCheck(model, self->unigram_api->type)) is_unigram = 0;
    } else if (is_bpe) {
        self->bpe_api = PyCapsule_Import(BPE_MERGE_API_NAME, 0);
        if (!self->bpe_api) return -1;
        if (!PyObject_TypeCheck(model, self->bpe_api->type) || !self->bpe_api->covers(model)) is_bpe = 0;
    }
    if (!is_spm && !is_unigram && !is_bpe) {
        PyErr_SetString(PyExc_TypeError,
                        "model must be a spm_merge.Merger, a bpe_merge.Merger its C entry covers or a unigram.Lattice");
        return -1;
    }
    self->space = PyMem_RawMalloc((size_t)space_len + 1);
    if (!self->space) {
        PyErr_NoMemory();
        return -1;
    }
    if (!is_unigram && !self->kept) {
        self->kept = PyMem_RawCalloc(1, sizeof(WordCache));
        if (!self->kept) {
            PyErr_NoMemory();
            return -1;
        }
    }
    memcpy(self->space, space, (size_t)space_len);
    self->space_len = space_len;
    self->prefix = prefix;
    self->suffix = suffix;
    self->remove_extra = remove_extra;
    self->split = split_cp;
    self->scanner = scanner;
    self->model_kind = is_spm ? MODEL_SPM : is_bpe ? MODEL_BPE : MODEL_UNIGRAM;
    self->word_ids = is_spm ? self->spm_api->word_ids : is_bpe ? self->bpe_api->word_ids : NULL;
    self->normalizer = normalizer == Py_None ? NULL : Py_NewRef(normalizer);
    self->model = Py_NewRef(model);
    return 0;
}

/* -- one text --------------------------------------------------------------------------------- */


typedef struct {
    Grow utf8;  /* char: the text as UTF-8 */
    Grow spare; /* Py_UCS4: the replaced text, then swapped with `cps` */
    Grow cps;   /* Py_UCS4: the normalized text's code points */
    Grow ids;   /* int32_t: every text's ids, one after the other */
    Py_ssize_t n_ids;
    Py_ssize_t *ends;  /* the scanner's match ends (raw-allocated) */
    Py_ssize_t ends_capacity;
    WordCache *cache; /* the pipeline's kept cache, or `own` */
    WordCache own;
} Scratch;

static uint32_t word_hash(const Py_UCS4 *cps, Py_ssize_t n) {
    uint64_t h = (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++) h = mix64(h ^ cps[i]) + 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 32);
}

/* The slot of cps[0:n] (its entry, or the empty slot where it would go). */
static CacheSlot *cache_slot(const WordCache *c, const Py_UCS4 *cps, Py_ssize_t n, uint32_t hash) {
    Py_ssize_t mask = c->n_slots - 1, at = (Py_ssize_t)hash & mask;
    for (;;) {
        CacheSlot *slot = &c->slots[at];
        if (slot->n_cps == 0) return slot;
        if (slot->hash == hash && slot->n_cps == n &&
            memcmp((const Py_UCS4 *)c->cps.data + slot->cps_at, cps, (size_t)n * sizeof(Py_UCS4)) == 0)
            return slot;
        at = (at + 1) & mask;
    }
}

/* Remembers cps[0:n] -> ids[0:count]; 0, or -1 out of memory (the cache is then left as it was,
 * or empty). Half full, the table doubles, its entries kept, up to CACHE_SLOTS_MAX; there it is
 * emptied. */
static int cache_add(WordCache *c, const Py_UCS4 *cps, Py_ssize_t n, uint32_t hash, const int32_t *ids,
                     Py_ssize_t count) {
    if (!c->slots) {
        c->slots = PyMem_RawCalloc((size_t)CACHE_SLOTS_MIN, sizeof(CacheSlot));
        if (!c->slots) return -1;
        c->n_slots = CACHE_SLOTS_MIN;
        c->used = c->cps_used = c->ids_used = 0;
    } else if (c->used * 2 >= c->n_slots && c->n_slots < CACHE_SLOTS_MAX) {
        Py_ssize_t size = c->n_slots * 2, mask = size - 1;
        CacheSlot *slots = PyMem_RawCalloc((size_t)size, sizeof(CacheSlot));
        if (!slots) return -1;
        for (Py_ssize_t i = 0; i < c->n_slots; i++) {
            if (!c->slots[i].n_cps) continue;
            Py_ssize_t at = (Py_ssize_t)c->slots[i].hash & mask;
            while (slots[at].n_cps) at = (at + 1) & mask;
            slots[at] = c->slots[i];
        }
        PyMem_RawFree(c->slots);
        c->slots = slots;
        c->n_slots = size;
    } else if (c->used * 2 >= c->n_slots) {
        memset(c->slots, 0, (size_t)c->n_slots * sizeof(CacheSlot));
        c->used = c->cps_used = c->ids_used = 0;
    }
    if (c->cps_used > INT32_MAX - n || c->ids_used > INT32_MAX - count) return 0; /* pools full: not cached */
    if (grow(&c->cps, c->cps_used + n, sizeof(Py_UCS4)) < 0 || grow(&c->ids, c->ids_used + count, sizeof(int32_t)) < 0)
        return -1;
    CacheSlot *slot = cache_slot(c, cps, n, hash);
    memcpy((Py_UCS4 *)c->cps.data + c->cps_used, cps, (size_t)n * sizeof(Py_UCS4));
    memcpy((int32_t *)c->ids.data + c->ids_used, ids, (size_t)count * sizeof(int32_t));
    *slot = (CacheSlot){hash, (int32_t)n, (int32_t)c->cps_used, (int32_t)c->ids_used, (int32_t)count};
    c->cps_used += n;
    c->ids_used += count;
    c->used++;
    return 0;
}

static void scratch_free(Scratch *s) {
    PyMem_RawFree(s->utf8.data);
    PyMem_RawFree(s->spare.data);
    PyMem_RawFree(s->cps.data);
    PyMem_RawFree(s->ids.data);
    PyMem_RawFree(s->ends);
    cache_free(&s->own);
}

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
    int ascii;
} Text;

/* The UTF-8 of a text into s->utf8; 1 for a lone surrogate (the pure path's error), -1 out of memory. */
static int to_utf8(const Text *t, Scratch *s, const unsigned char **bytes, Py_ssize_t *size) {
    if (t->ascii) {
        *bytes = t->data;
        *size = t->length;
        return 0;
    }
    if (t->length > PY_SSIZE_T_MAX / 4 || grow(&s->utf8, 4 * t->length, 1) < 0) return -1;
    unsigned char *out = s->utf8.data;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < t->length; i++) {
        Py_UCS4 c = PyUnicode_READ(t->kind, t->data, i);
        if (c >= 0xD800 && c <= 0xDFFF) return 1;
        k += utf8_encode(c, out + k);
    }
    *bytes = out;
    *size = k;
    return 0;
}

/* Code points of `size` bytes of UTF-8 into s->cps; 1 where the bytes are not valid UTF-8. */
static int decode_utf8(const unsigned char *b, Py_ssize_t size, Scratch *s, Py_ssize_t *n) {
    if (grow(&s->cps, size + 1, sizeof(Py_UCS4)) < 0) return -1;
    Py_UCS4 *out = s->cps.data;
    Py_ssize_t k = 0, i = 0;
    while (i < size) {
        unsigned char lead = b[i];
        Py_UCS4 c;
        int more;
        if (lead < 0x80) {
            out[k++] = lead;
            i++;
            continue;
        }
        if (lead >= 0xC2 && lead < 0xE0) {
            c = lead & 0x1F;
            more = 1;
        } else if (lead >= 0xE0 && lead < 0xF0) {
            c = lead & 0x0F;
            more = 2;
        } else if (lead >= 0xF0 && lead < 0xF5) {
            c = lead & 0x07;
            more = 3;
        } else {
            return 1;
        }
        if (more > size - i - 1) return 1;
        for (int j = 1; j <= more; j++) {
            if ((b[i + j] & 0xC0) != 0x80) return 1;
            c = (c << 6) | (b[i + j] & 0x3F);
        }
        /* overlong forms, surrogates and values past U+10FFFF */
        if ((more == 2 && c < 0x800) || (more == 3 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
            return 1;
        out[k++] = c;
        i += more + 1;
    }
    *n = k;
    return 0;
}

/* The code points of a text with no normalizer into s->cps; 1 for a lone surrogate. */
static int read_cps(const Text *t, Scratch *s, Py_ssize_t *n) {
    if (grow(&s->cps, t->length + 1, sizeof(Py_UCS4)) < 0) return -1;
    Py_UCS4 *out = s->cps.data;
    for (Py_ssize_t i = 0; i < t->length; i++) {
        Py_UCS4 c = PyUnicode_READ(t->kind, t->data, i);
        if (c >= 0xD800 && c <= 0xDFFF) return 1;
        out[i] = c;
    }
    *n = t->length;
    return 0;
}

/* `Replace.normalize` of a literal pattern (`str.replace`: its leftmost matches, not
 * overlapping) on s->cps[0:*n]; 0, or -1 out of memory. */
static int replace_cps(const Pipeline *p, Scratch *s, Py_ssize_t *n) {
    const Py_UCS4 *pattern = p->replace, *content = p->replace + p->pattern_len;
    Py_ssize_t m = p->pattern_len, c = p->content_len, len = *n, hits = 0;
    const Py_UCS4 *in = s->cps.data;
    for (Py_ssize_t i = 0; i + m <= len;) {
        if (in[i] == pattern[0] && memcmp(in + i, pattern, (size_t)m * sizeof(Py_UCS4)) == 0) {
            hits++;
            i += m;
        } else {
            i++;
        }
    }
    if (hits == 0) return 0;
    if (c > m && hits > (PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Py_UCS4) - len) / (c - m)) return -1;
    Py_ssize_t size = len + hits * (c - m);
    if (grow(&s->spare, size + 1, sizeof(Py_UCS4)) < 0) return -1;
    Py_UCS4 *out = s->spare.data;
    Py_ssize_t k = 0, i = 0;
    while (i < len) {
        if (i + m <= len && in[i] == pattern[0] && memcmp(in + i, pattern, (size_t)m * sizeof(Py_UCS4)) == 0) {
            memcpy(out + k, content, (size_t)c * sizeof(Py_UCS4));
            k += c;
            i += m;
        } else {
            out[k++] = in[i++];
        }
    }
    Grow swap = s->cps;
    s->cps = s->spare;
    s->spare = swap;
    *n = k;
    return 0;
}

/* A per-word model on the word cps[start:end] (`BPE._cut`'s chunks each), the ids appended to s->ids. */
static int word_ids(const Pipeline *p, Scratch *s, Py_ssize_t start, Py_ssize_t end);

/* The model on cps[start:end], the ids appended to s->ids. */
static int model_ids(const Pipeline *p, Scratch *s, Py_ssize_t start, Py_ssize_t end) {
    if (p->model_kind != MODEL_BPE) return word_ids(p, s, start, end);
    Py_ssize_t n = end - start;
    for (Py_ssize_t at = start; at < end;) {
        Py_ssize_t stop = start + p->bpe_api->chunk_end(p->model, (const Py_UCS4 *)s->cps.data + start, n, at - start);
        if (stop <= at || stop > end) return 1; /* never: chunks are non-empty and in the word */
        int status = word_ids(p, s, at, stop);
        if (status) return status;
        at = stop;
    }
    return 0;
}

static int word_ids(const Pipeline *p, Scratch *s, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t n = end - start;
    if (n > (PY_SSIZE_T_MAX - s->n_ids) / 4 || grow(&s->ids, s->n_ids + 4 * n, sizeof(int32_t)) < 0) return -1;
    const Py_UCS4 *cps = (const Py_UCS4 *)s->cps.data + start;
    int32_t *out = (int32_t *)s->ids.data + s->n_ids;
    Py_ssize_t count = 0;
    if (p->model_kind == MODEL_UNIGRAM) {
        int status = p->unigram_api->text_ids(p->model, cps, n, out, &count);
        if (status == 0) s->n_ids += count;
        return status;
    }
    WordCache *cache = s->cache;
    uint32_t hash = 0;
    if (n <= CACHED_CHARS) {
        hash = word_hash(cps, n);
        if (cache->slots) {
            const CacheSlot *slot = cache_slot(cache, cps, n, hash);
            if (slot->n_cps) {
                memcpy(out, (const int32_t *)cache->ids.data + slot->ids_at, (size_t)slot->n_ids * sizeof(int32_t));
                s->n_ids += slot->n_ids;
                return 0;
            }
        }
    }
    int status = p->word_ids(p->model, cps, n, out, &count);
    if (status != 0) return status;
    if (n <= CACHED_CHARS && cache_add(cache, cps, n, hash, out, count) < 0) return -1;
    s->n_ids += count;
    return 0;
}

/* One text's ids appended to s->ids: 0, LINE_PURE (1) or -1 (out of memory). On 1 or -1, the
 * caller drops what this text appended. */
/* Whether the text holds one of the pipeline's stops. */
static int holds_stop(const Pipeline *p, const Text *t) {
    for (Py_ssize_t i = 0; i < t->length; i++) {
        Py_UCS4 c = PyUnicode_READ(t->kind, t->data, i);
        if (c < 128) {
            if (p->ascii_stops[c >> 6] >> (c & 63) & 1) return 1;
            continue;
        }
        for (Py_ssize_t k = 0; k < p->n_stops; k++)
            if (p->stops[k] == c) return 1;
    }
    return 0;
}

static int encode_text(const Pipeline *p, const Text *t, Scratch *s) {
    if (t->length == 0) return 0;
    if (p->any_stops && holds_stop(p, t)) return LINE_PURE;
    Py_ssize_t n;
    int status;
    if (p->normalizer) {
        const unsigned char *bytes;
        Py_ssize_t size;
        status = to_utf8(t, s, &bytes, &size);
        if (status) return status;
        char *normalized;
        Py_ssize_t normalized_size;
        status = p->charsmap_api->sentencepiece(p->normalizer, bytes, size, (const unsigned char *)p->space,
                                                p->space_len, p->prefix, p->suffix, p->remove_extra, &normalized,
                                                &normalized_size);
        if (status) return status;
        status = decode_utf8((const unsigned char *)normalized, normalized_size, s, &n);
        PyMem_RawFree(normalized);
        if (status) return status;
    } else {
        status = read_cps(t, s, &n);
        if (status) return status;
        if (p->replace) {
            status = replace_cps(p, s, &n);
            if (status) return status;
        }
    }
    if (n == 0) return 0;
    if (p->scanner >= 0) {
        Py_ssize_t count;
        status = p->split_api->scan(p->scanner, s->cps.data, n, &s->ends, &s->ends_capacity, &count);
        if (status) return status;
        Py_ssize_t word = 0;
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t end = s->ends[k];
            if (end <= word || end > n) return 1; /* never: matches are non-empty and in order */
            status = model_ids(p, s, word, end);
            if (status) return status;
            word = end;
        }
        return word == n ? 0 : 1;
    }
    if (!p->split) return model_ids(p, s, 0, n);
    const Py_UCS4 *cps = s->cps.data;
    Py_ssize_t word = 0;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (cps[i] == p->split && cps[i - 1] != p->split) {
            status = model_ids(p, s, word, i);
            if (status) return status;
            cps = s->cps.data;
            word = i;
        }
    }
    return model_ids(p, s, word, n);
}

/* A new reference to the int `id`, shared across calls (the GIL held): building the lists then
 * costs no allocation per id. */
static PyObject *id_object(Pipeline *self, int32_t id) {
    if (id < 0 || id >= MAX_SHARED_ID) return PyLong_FromLong(id);
    if (id >= self->n_ints) {
        Py_ssize_t size = self->n_ints ? self->n_ints : 1024;
        while (size <= id) size *= 2;
        PyObject **ints = PyMem_Realloc(self->ints, (size_t)size * sizeof(PyObject *));
        if (!ints) return PyErr_NoMemory();
        memset(ints + self->n_ints, 0, (size_t)(size - self->n_ints) * sizeof(PyObject *));
        self->ints = ints;
        self->n_ints = size;
    }
    if (!self->ints[id]) {
        self->ints[id] = PyLong_FromLong(id);
        if (!self->ints[id]) return NULL;
    }
    return Py_NewRef(self->ints[id]);
}

/* encode(texts, start, stop) -> list[list[int] | None]: the ids of texts[start:stop], None for a
 * text the pure pipeline must encode. */
static PyObject *Pipeline_encode(Pipeline *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "encode(texts: list[str], start: int, stop: int)");
        return NULL;
    }
    if (!self->model) {
        PyErr_SetString(PyExc_RuntimeError, "Pipeline is not initialised");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), stop = PyLong_AsSsize_t(args[2]);
    if ((start == -1 || stop == -1) && PyErr_Occurred()) return NULL;
    PyObject *list = args[0];
    Py_ssize_t size = PyList_GET_SIZE(list);
    if (start < 0) start = 0;
    if (stop > size) stop = size;
    Py_ssize_t count = stop > start ? stop - start : 0;
    /* The texts are held (a reference each) while the GIL is released: another thread may change the list. */
    PyObject **held = NULL;
    Text *texts = NULL;
    Py_ssize_t *ends = NULL;
    unsigned char *status = NULL;
    Scratch s;
    memset(&s, 0, sizeof s);
    s.cache = &s.own;
    PyObject *result = NULL;
    Py_ssize_t n_held = 0;
    size_t items = (size_t)(count ? count : 1);
    held = PyMem_Malloc(items * sizeof(PyObject *));
    texts = PyMem_Malloc(items * sizeof(Text));
    ends = PyMem_Malloc(items * sizeof(Py_ssize_t));
    status = PyMem_Malloc(items);
    if (!held || !texts || !ends || !status) {
        PyErr_NoMemory();
        goto done;
    }
    for (; n_held < count; n_held++) {
        PyObject *text = PyList_GET_ITEM(list, start + n_held);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "encode: texts[%zd] is not a str", start + n_held);
            goto done;
        }
        if (PyUnicode_READY(text) < 0) goto done;
        held[n_held] = Py_NewRef(text);
        texts[n_held] = (Text){PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text),
                               PyUnicode_IS_ASCII(text)};
    }
    int out_of_memory = 0;
    WordCache *kept = self->kept; /* taken for this call (the GIL is held) */
    self->kept = NULL;
    if (kept) s.cache = kept;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t before = s.n_ids;
        int outcome = encode_text(self, &texts[i], &s);
        if (outcome < 0) {
            out_of_memory = 1;
            break;
        }
        if (outcome) s.n_ids = before;
        status[i] = outcome ? LINE_PURE : LINE_DONE;
        ends[i] = s.n_ids;
    }
    Py_END_ALLOW_THREADS
    if (kept) self->kept = kept;
    if (out_of_memory) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyList_New(count);
    if (!result) goto done;
    const int32_t *ids = s.ids.data;
    Py_ssize_t from = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item;
        if (status[i] == LINE_PURE) {
            item = Py_NewRef(Py_None);
        } else {
            item = PyList_New(ends[i] - from);
            if (!item) {
                Py_CLEAR(result);
                goto done;
            }
            for (Py_ssize_t k = from; k < ends[i]; k++) {
                PyObject *id = id_object(self, ids[k]);
                if (!id) {
                    Py_DECREF(item);
                    Py_CLEAR(result);
                    goto done;
                }
                PyList_SET_ITEM(item, k - from, id);
            }
        }
        from = ends[i];
        PyList_SET_ITEM(result, i, item);
    }
done:
    for (Py_ssize_t i = 0; i < n_held; i++) Py_DECREF(held[i]);
    PyMem_Free(held);
    PyMem_Free(texts);
    PyMem_Free(ends);
    PyMem_Free(status);
    scratch_free(&s);
    return result;
}

static PyObject *Pipeline_reduce(Pipeline *self, PyObject *unused) {
    PyErr_SetString(PyExc_TypeError, "a Pipeline is not picklable: it is made from its tokenizer's stages");
    return NULL;
}

static PyMethodDef Pipeline_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))Pipeline_encode, METH_FASTCALL,
     "encode(texts, start, stop) -> list[list[int] | None]: the ids of texts[start:stop], None where the pure "
     "pipeline must encode a text."},
    {"__reduce__", (PyCFunction)Pipeline_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PipelineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.batch.Pipeline",
    .tp_doc = "Pipeline(normalizer, space, prefix, suffix, remove_extra, split, model, stops=''): compiled stages "
               "chained.",
    .tp_basicsize = sizeof(Pipeline),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Pipeline_init,
    .tp_dealloc = (destructor)Pipeline_dealloc,
    .tp_methods = Pipeline_methods,
};

static struct PyModuleDef batch_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "polytok._kernels.batch",
    .m_doc = "Many texts through the compiled stages in one call, without the GIL.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit_batch(void) {
    if (PyType_Ready(&PipelineType) < 0) return NULL;
    PyObject *m = PyModule_Create(&batch_module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Pipeline", (PyObject *)&PipelineType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
