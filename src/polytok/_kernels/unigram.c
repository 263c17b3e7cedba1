/* The Unigram model's Viterbi best path, compiled: polytok._kernels.unigram.
 *
 * Semantics are those of polytok/models/unigram.py (`Unigram._best_path`, float64: HF
 * tokenizers 0.23.3 models/unigram/model.rs `encode_optimized`, llama.cpp's UGM) and of
 * polytok/models/_unigram_float32.py (`Float32Viterbi._exact`: sentencepiece 0.2.3
 * src/unigram_model.cc `Model::EncodeOptimized`, float32). The algorithm is reproduced from
 * those files; no reference code is copied.
 *
 * A `Lattice` holds the matchable pieces of one vocabulary in a trie over code points (one
 * open-addressing hash of (node, code point) -> (child, id of the piece ending there), and a
 * direct table of the root's edges by code point), the path score of every id, the unknown
 * node's id and score. `nodes(word)` runs the Viterbi over the code points of `word` (a str:
 * lone surrogates are code points like any other) and returns the best path's ids, with
 * sentencepiece's and llama.cpp's unknown-run rules applied ("collapse"), or the nodes and
 * where each ends (HF's "fuse", and spans), which the caller rewrites in Python. A sentencepiece
 * `.model` read in C (polytok._kernels.spm_model) gives its Lattice without a Python object per
 * piece (`Lattice.from_vocab`, from the reader's piece records).
 *
 * The rules, exactly as the pure loops: positions in order; from each, the pieces that start
 * there shortest first (the trie walk), then, if no one-character piece starts there, the
 * unknown node of one character; an offer wins only if the end is unset or the offer is
 * strictly greater (ties keep the first offer; a NaN offer never wins a set end).
 *
 * Arithmetic. float64: `best + score` in double, as Python does. float32: the pure path
 * stores the double sum `best + score` into a float (one rounding of the double sum), and so
 * does this one: `(float)((double)best + score)`, bit for bit the pure path's value for any
 * score. When the score is itself a float32 value (every score sentencepiece's reader
 * passes), this is also sentencepiece's native `float + float`: double rounding through
 * binary64 is innocuous for a sum of two binary32 values (53 >= 2*24 + 2, Figueroa 1995).
 * The shift of sentencepiece's score reset (|best| > 100000) is the same store of a double
 * difference. There is no multiplication anywhere, so no fused multiply-add can be formed
 * whatever the contraction setting, and the explicit casts discard any excess precision.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "kernel_api.h"
#include "kernel_util.h"

#define SHIFT_AT 100000.0 /* sentencepiece's score reset bound (pure: SHIFT_AT) */
#define GIL_FREE_CHARS 256 /* words at least this long run without the GIL */

static PyObject *encode_error; /* polytok.errors.EncodeError */

/* -- the trie ------------------------------------------------------------------------ */

/* One edge of the trie: the child reached from `parent` by a code point, and the id of the
 * piece that ends at that child (-1: none). Key and answer share one 16-byte slot, so a step
 * of the walk reads one cache line. */
typedef struct {
    uint64_t key;  /* ((parent + 1) << 21) | code point; 0 = empty slot */
    uint32_t child;
    int32_t id;
} Slot;

#define ROOT_TABLE_MAX 0x10000 /* first code points below this are looked up in a direct table */

typedef struct {
    Slot *slots;
    Py_ssize_t mask;  /* slots - 1 (a power of two minus one) */
    Py_ssize_t used;  /* = nodes - 1: every node but the root is reached by one edge */
    uint32_t *root;     /* per code point below root_size: 1 + the slot of the root's edge, or 0 */
    uint32_t root_size; /* 1 + the highest code point below ROOT_TABLE_MAX that starts an edge */
    uint32_t *root_cps; /* while building: the code points below ROOT_TABLE_MAX of the root's edges */
    Py_ssize_t n_root, root_cap;
} Trie;

static inline uint64_t trie_key(uint32_t parent, uint32_t cp) {
    return ((uint64_t)parent + 1) << 21 | (uint64_t)cp;
}

static inline Py_ssize_t trie_slot(uint64_t key, Py_ssize_t mask) {
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    return (Py_ssize_t)((h ^ (h >> 29)) & (uint64_t)mask);
}

/* The slot of the edge from `parent` by `cp`, or -1. */
static inline Py_ssize_t trie_find(const Trie *t, uint32_t parent, uint32_t cp) {
    uint64_t key = trie_key(parent, cp);
    Py_ssize_t slot = trie_slot(key, t->mask);
    for (;;) {
        uint64_t k = t->slots[slot].key;
        if (k == key) return slot;
        if (k == 0) return -1;
        slot = (slot + 1) & t->mask;
    }
}

static void trie_free(Trie *t) {
    PyMem_Free(t->slots);
    PyMem_Free(t->root);
    PyMem_Free(t->root_cps);
    memset(t, 0, sizeof(*t));
}

/* Rehash into 2**k slots, the least with at most `edges` / 2 used (never fewer than 1024). */
static int trie_resize(Trie *t, Py_ssize_t edges) {
    Py_ssize_t size = 1024;
    while (size / 2 < edges) {
        if (size > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(Slot)) {
            PyErr_NoMemory();
            return -1;
        }
        size *= 2;
    }
    if (t->slots && size == t->mask + 1) return 0;
    Slot *slots = PyMem_Calloc((size_t)size, sizeof(Slot));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t mask = size - 1;
    for (Py_ssize_t i = 0; t->slots && i <= t->mask; i++) {
        if (t->slots[i].key == 0) continue;
        Py_ssize_t slot = trie_slot(t->slots[i].key, mask);
        while (slots[slot].key != 0) slot = (slot + 1) & mask;
        slots[slot] = t->slots[i];
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* An empty trie for the `pieces` matchable pieces of `chars` code points in all. Its edges are
 * at most `chars` and at least `pieces` (each piece ends at its own node); vocabularies share
 * prefixes enough that half of `chars` (but never fewer than 1.25 `pieces`) seldom makes the table
 * grow, and trie_finish shrinks it when the pieces share even more. */
static int trie_init(Trie *t, Py_ssize_t pieces, Py_ssize_t chars) {
    memset(t, 0, sizeof(*t));
    Py_ssize_t edges = chars / 2;
    if (edges < pieces + pieces / 4) edges = pieces + pieces / 4;
    if (edges > chars) edges = chars;
    return trie_resize(t, edges);
}

/* The slot of the edge from `parent` by `cp`, made if absent (its child a new node, no id);
 * -1 with an exception set on failure. Slots move when the table grows: use the answer
 * before the next call. */
static Py_ssize_t trie_add(Trie *t, uint32_t parent, uint32_t cp) {
    uint64_t key = trie_key(parent, cp);
    Py_ssize_t slot = trie_slot(key, t->mask);
    for (uint64_t k; (k = t->slots[slot].key) != 0; slot = (slot + 1) & t->mask)
        if (k == key) return slot;
    if ((t->used + 1) * 2 > t->mask + 1) { /* grown: the empty slot moves */
        if (trie_resize(t, (t->mask + 1) / 2 + 1) < 0) return -1;
        slot = trie_slot(key, t->mask);
        while (t->slots[slot].key != 0) slot = (slot + 1) & t->mask;
    }
    if ((uint64_t)t->used >= (uint64_t)UINT32_MAX - 2) {
        PyErr_SetString(PyExc_OverflowError, "too many trie nodes");
        return -1;
    }
    if (parent == 0 && cp < ROOT_TABLE_MAX) {
        if (t->n_root == t->root_cap) {
            Py_ssize_t cap = t->root_cap ? t->root_cap * 2 : 256; /* at most ROOT_TABLE_MAX */
            uint32_t *grown = PyMem_Realloc(t->root_cps, (size_t)cap * sizeof(uint32_t));
            if (!grown) {
                PyErr_NoMemory();
                return -1;
            }
            t->root_cps = grown;
            t->root_cap = cap;
        }
        t->root_cps[t->n_root++] = cp;
    }
    t->used++;
    t->slots[slot].key = key;
    t->slots[slot].child = (uint32_t)t->used; /* nodes are numbered 1, 2, ... in order of creation */
    t->slots[slot].id = -1;
    return slot;
}

/* After the last insertion: the table shrunk to its load, and the direct table of the root's
 * edges (slots no longer move), zeroed memory up to the highest code point an edge starts
 * with (below ROOT_TABLE_MAX), filled from the edges' list. */
static int trie_finish(Trie *t) {
    if (trie_resize(t, t->used) < 0) return -1;
    if (t->mask > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "trie too large");
        return -1;
    }
    uint32_t size = 0;
    for (Py_ssize_t i = 0; i < t->n_root; i++)
        if (t->root_cps[i] >= size) size = t->root_cps[i] + 1;
    t->root = PyMem_Calloc((size_t)(size ? size : 1), sizeof(uint32_t));
    if (!t->root) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < t->n_root; i++)
        t->root[t->root_cps[i]] = (uint32_t)trie_find(t, 0, t->root_cps[i]) + 1;
    t->root_size = size;
    PyMem_Free(t->root_cps);
    t->root_cps = NULL;
    t->n_root = t->root_cap = 0;
    return 0;
}

/* -- the Lattice object ----------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Trie trie;
    double *scores;       /* per id: the path score */
    Py_ssize_t size;      /* number of ids */
    PyObject **id_objects; /* per id: the int object, made on first use and shared after, so lists
                            * cost no allocation per id (NULL: not made yet) */
    PyObject *unk_object;  /* the unknown node's id as an int */
    int32_t unk_id;        /* the unknown node's id, -1 for none (a marker, llama.cpp's LLAMA_TOKEN_NULL) */
    double unk_score;
    int float32;
    int raise_unknown;     /* unk_id None with HF's rules: an unknown node that wins raises */
    int collapse;          /* unknown_runs="collapse" */
    int fuse;              /* unknown_runs="fuse" rewritten here: the trie holds every piece as its last id */
    int byte_fallback;     /* byte_ids holds the <0xHH> pieces' ids (-1: absent) */
    int32_t byte_ids[256];
    int ready;             /* set once __init__ has completed */
} Lattice;

static void Lattice_dealloc(Lattice *self) {
    trie_free(&self->trie);
    PyMem_Free(self->scores);
    if (self->id_objects) {
        for (Py_ssize_t i = 0; i < self->size; i++) Py_XDECREF(self->id_objects[i]);
        PyMem_Free(self->id_objects);
    }
    Py_XDECREF(self->unk_object);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Lattice(pieces, ids, scores, unk_id, unk_score, float32, raise_unknown, collapse, byte_ids, fuse=False)
 *   pieces, ids: the matchable pieces and the id each matches as (equal lengths; ids None: each
 *   piece's own index);
 *   scores: the path score of every id (a list of floats); unk_id: an id or -1;
 *   byte_ids: None, or the 256 ids of the <0xHH> pieces (None where absent);
 *   fuse: HF's unknown runs ("fuse") are rewritten here, which the caller asks only when `pieces`
 *   are every piece of the vocabulary (so the trie answers a run's lookup as `Unigram._ids`). */
static int Lattice_build(Lattice *self, PyObject *pieces, PyObject *ids, PyObject *scores, long unk_id,
                         double unk_score, int float32, int raise_unknown, int collapse, PyObject *byte_ids);

/* The lists are copied into tuples first: converting an item (`__index__`, `__float__`) may run
 * Python code, which must not be able to resize what is being read. */
static int Lattice_init(Lattice *self, PyObject *args, PyObject *kwargs) {
    PyObject *pieces, *ids, *scores, *byte_ids;
    long unk_id;
    double unk_score;
    int float32, raise_unknown, collapse, fuse = 0;
    static char *kwlist[] = {"pieces", "ids", "scores", "unk_id", "unk_score", "float32", "raise_unknown",
                             "collapse", "byte_ids", "fuse", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO!ldpppO|p", kwlist, &PyList_Type, &pieces, &ids,
                                     &PyList_Type, &scores, &unk_id, &unk_score, &float32, &raise_unknown, &collapse,
                                     &byte_ids, &fuse))
        return -1;
    if (ids != Py_None && !PyList_Check(ids)) {
        PyErr_SetString(PyExc_TypeError, "ids must be None or a list");
        return -1;
    }
    if (fuse && collapse) {
        PyErr_SetString(PyExc_ValueError, "fuse and collapse exclude each other");
        return -1;
    }
    if (byte_ids != Py_None && (!PyList_Check(byte_ids) || PyList_GET_SIZE(byte_ids) != 256)) {
        PyErr_SetString(PyExc_TypeError, "byte_ids must be None or a list of 256 ids or None");
        return -1;
    }
    PyObject *p = PyList_AsTuple(pieces), *s = PyList_AsTuple(scores);
    PyObject *i = ids == Py_None ? Py_NewRef(Py_None) : PyList_AsTuple(ids);
    PyObject *b = byte_ids == Py_None ? Py_NewRef(Py_None) : PyList_AsTuple(byte_ids);
    int status = -1;
    if (p && i && s && b)
        status = Lattice_build(self, p, i, s, unk_id, unk_score, float32, raise_unknown, collapse, b);
    Py_XDECREF(p);
    Py_XDECREF(i);
    Py_XDECREF(s);
    Py_XDECREF(b);
    if (status == 0) self->fuse = fuse;
    return status;
}

/* The scores (0.0 until the caller fills them), id objects, options and byte ids of a Lattice
 * of `size` ids; byte_ids: None or a tuple of 256 ids or None. */
static int Lattice_setup(Lattice *self, Py_ssize_t size, long unk_id, double unk_score, int float32,
                         int raise_unknown, int collapse, PyObject *byte_ids) {
    self->scores = PyMem_Malloc((size_t)(size ? size : 1) * sizeof(double));
    self->id_objects = PyMem_Calloc((size_t)(size ? size : 1), sizeof(PyObject *));
    if (!self->scores || !self->id_objects) {
        PyErr_NoMemory();
        return -1;
    }
    self->size = size;
    for (Py_ssize_t i = 0; i < size; i++) self->scores[i] = 0.0;
    self->unk_object = PyLong_FromLong(unk_id);
    if (!self->unk_object) return -1;
    self->unk_id = (int32_t)unk_id;
    self->unk_score = unk_score;
    self->float32 = float32;
    self->raise_unknown = raise_unknown;
    self->collapse = collapse;
    self->byte_fallback = byte_ids != Py_None;
    for (int b = 0; b < 256; b++) self->byte_ids[b] = -1;
    if (self->byte_fallback) {
        for (int b = 0; b < 256; b++) {
            PyObject *item = PyTuple_GET_ITEM(byte_ids, b);
            if (item == Py_None) continue;
            Py_ssize_t id = PyLong_AsSsize_t(item);
            if (id == -1 && PyErr_Occurred()) return -1;
            if (id < 0 || id >= size) {
                PyErr_SetString(PyExc_ValueError, "byte id out of range");
                return -1;
            }
            self->byte_ids[b] = (int32_t)id;
        }
    }
    return 0;
}

static int Lattice_build(Lattice *self, PyObject *pieces, PyObject *ids, PyObject *scores, long unk_id,
                         double unk_score, int float32, int raise_unknown, int collapse, PyObject *byte_ids) {
    if (self->scores || self->trie.slots) {
        PyErr_SetString(PyExc_RuntimeError, "Lattice is already initialised");
        return -1;
    }
    Py_ssize_t size = PyTuple_GET_SIZE(scores);
    if (size > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "vocabulary too large");
        return -1;
    }
    if (ids != Py_None && PyTuple_GET_SIZE(pieces) != PyTuple_GET_SIZE(ids)) {
        PyErr_SetString(PyExc_ValueError, "pieces and ids differ in length");
        return -1;
    }
    if (unk_id < -1 || unk_id >= size) {
        PyErr_SetString(PyExc_ValueError, "unk_id out of range");
        return -1;
    }
    Py_ssize_t total = 0; /* the pieces' total length: at most one edge per character */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pieces); i++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, i);
        if (!PyUnicode_Check(piece)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return -1;
        }
        if (total > PY_SSIZE_T_MAX / 4 - PyUnicode_GET_LENGTH(piece)) {
            PyErr_NoMemory();
            return -1;
        }
        total += PyUnicode_GET_LENGTH(piece);
    }
    if (trie_init(&self->trie, PyTuple_GET_SIZE(pieces), total) < 0) return -1;
    if (Lattice_setup(self, size, unk_id, unk_score, float32, raise_unknown, collapse, byte_ids) < 0) return -1;
    for (Py_ssize_t i = 0; i < size; i++) {
        double score = PyFloat_AsDouble(PyTuple_GET_ITEM(scores, i));
        if (score == -1.0 && PyErr_Occurred()) return -1;
        self->scores[i] = score;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pieces); i++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, i);
        if (!PyUnicode_Check(piece)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return -1;
        }
        Py_ssize_t id = ids == Py_None ? i : PyLong_AsSsize_t(PyTuple_GET_ITEM(ids, i));
        if (id == -1 && PyErr_Occurred()) return -1;
        if (id < 0 || id >= size) {
            PyErr_SetString(PyExc_ValueError, "piece id out of range");
            return -1;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(piece);
        if (length == 0) continue; /* the empty piece never matches */
        int kind = PyUnicode_KIND(piece);
        const void *data = PyUnicode_DATA(piece);
        uint32_t node = 0;
        Py_ssize_t slot = -1;
        for (Py_ssize_t j = 0; j < length; j++) {
            slot = trie_add(&self->trie, node, (uint32_t)PyUnicode_READ(kind, data, j));
            if (slot < 0) return -1;
            node = self->trie.slots[slot].child;
        }
        self->trie.slots[slot].id = (int32_t)id;
    }
    if (trie_finish(&self->trie) < 0) return -1;
    self->ready = 1;
    return 0;
}

/* One piece record of polytok._kernels.spm_model (`Vocab.records`, spm_model.c's Record). */
typedef struct {
    uint32_t start, len; /* of the piece's UTF-8 text in the file's bytes */
    float score;
    uint32_t type; /* 1..6: NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE */
} SpmRecord;

/* The next code point of the UTF-8 s[*at:size] (advancing *at), or -1 if it is not valid UTF-8. */
static int32_t next_utf8(const unsigned char *s, Py_ssize_t size, Py_ssize_t *at) {
    unsigned char c = s[*at];
    int more = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
    if (more < 0 || size - *at <= more) return -1;
    uint32_t cp = more == 0 ? c : more == 1 ? (uint32_t)(c & 0x1F) : more == 2 ? (uint32_t)(c & 0x0F) : (uint32_t)(c & 0x07);
    for (int k = 1; k <= more; k++) {
        if ((s[*at + k] & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (s[*at + k] & 0x3F);
    }
    if (cp > 0x10FFFF) return -1;
    *at += more + 1;
    return (int32_t)cp;
}

/* The trie and path scores of sentencepiece's rules from a Vocab's records (what `Unigram` gets
 * from `_sentencepiece_build._unigram` for a .model whose pieces are all distinct): NORMAL and
 * USER_DEFINED pieces match, as their own id; a USER_DEFINED piece scores the float32 of
 * 0.1 * (UTF-8 length - 1), any other its own score. */
static int Lattice_fill_records(Lattice *self, const unsigned char *data, Py_ssize_t size, const SpmRecord *records,
                                Py_ssize_t n) {
    Py_ssize_t total = 0, matchable = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const SpmRecord *r = &records[i];
        if ((Py_ssize_t)r->start > size || (Py_ssize_t)r->len > size - (Py_ssize_t)r->start) {
            PyErr_SetString(PyExc_ValueError, "a piece record points past the data");
            return -1;
        }
        if (r->type == 4) self->scores[i] = (double)(float)(0.1 * (double)((Py_ssize_t)r->len - 1));
        else self->scores[i] = (double)r->score;
        if (r->type != 1 && r->type != 4) continue;
        matchable++;
        for (uint32_t b = 0; b < r->len; b++) total += (data[r->start + b] & 0xC0) != 0x80; /* code points */
    }
    if (trie_init(&self->trie, matchable, total) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const SpmRecord *r = &records[i];
        if ((r->type != 1 && r->type != 4) || r->len == 0) continue;
        const unsigned char *s = data + r->start;
        uint32_t node = 0;
        Py_ssize_t slot = -1;
        for (Py_ssize_t at = 0; at < (Py_ssize_t)r->len;) {
            int32_t cp = s[at] < 0x80 ? s[at++] : next_utf8(s, r->len, &at);
            if (cp < 0) {
                PyErr_SetString(PyExc_ValueError, "a piece is not UTF-8");
                return -1;
            }
            slot = trie_add(&self->trie, node, (uint32_t)cp);
            if (slot < 0) return -1;
            node = self->trie.slots[slot].child;
        }
        if (self->trie.slots[slot].id >= 0) {
            PyErr_SetString(PyExc_ValueError, "a piece is listed twice");
            return -1;
        }
        self->trie.slots[slot].id = (int32_t)i;
    }
    return trie_finish(&self->trie);
}

/* Lattice.from_vocab(data: bytes, records: bytes, unk_id, unk_score, float32, raise_unknown, collapse, byte_ids)
 * The Lattice of a sentencepiece .model read by spm_model (`Vocab.data`, `Vocab.records`); the
 * other arguments as Lattice's. ValueError: a piece listed twice, a bad record. */
static PyObject *Lattice_from_vocab(PyTypeObject *type, PyObject *args) {
    Py_buffer data, records;
    long unk_id;
    double unk_score;
    int float32, raise_unknown, collapse;
    PyObject *byte_ids;
    if (!PyArg_ParseTuple(args, "y*y*ldpppO:from_vocab", &data, &records, &unk_id, &unk_score, &float32,
                          &raise_unknown, &collapse, &byte_ids))
        return NULL;
    Lattice *self = NULL;
    SpmRecord *copy = NULL;
    PyObject *bytes_tuple = NULL;
    Py_ssize_t n = records.len / (Py_ssize_t)sizeof(SpmRecord);
    if (records.len % (Py_ssize_t)sizeof(SpmRecord) != 0 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "records must be whole piece records");
        goto fail;
    }
    if (unk_id < -1 || unk_id >= n) {
        PyErr_SetString(PyExc_ValueError, "unk_id out of range");
        goto fail;
    }
    if (byte_ids != Py_None && (!PyList_Check(byte_ids) || PyList_GET_SIZE(byte_ids) != 256)) {
        PyErr_SetString(PyExc_TypeError, "byte_ids must be None or a list of 256 ids or None");
        goto fail;
    }
    bytes_tuple = byte_ids == Py_None ? Py_NewRef(Py_None) : PyList_AsTuple(byte_ids);
    /* the records in place when aligned for them (a bytes object's data is), else an aligned copy */
    int aligned = (uintptr_t)records.buf % _Alignof(SpmRecord) == 0;
    if (!aligned) copy = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(SpmRecord));
    self = (Lattice *)type->tp_alloc(type, 0);
    if (!bytes_tuple || (!aligned && !copy) || !self) {
        if (!aligned && !copy) PyErr_NoMemory();
        goto fail;
    }
    if (copy) memcpy(copy, records.buf, (size_t)records.len);
    if (Lattice_setup(self, n, unk_id, unk_score, float32, raise_unknown, collapse, bytes_tuple) < 0
        || Lattice_fill_records(self, data.buf, data.len, copy ? copy : (const SpmRecord *)records.buf, n) < 0)
        goto fail;
    self->ready = 1;
    PyMem_Free(copy);
    Py_DECREF(bytes_tuple);
    PyBuffer_Release(&data);
    PyBuffer_Release(&records);
    return (PyObject *)self;
fail:
    Py_XDECREF(self);
    Py_XDECREF(bytes_tuple);
    PyMem_Free(copy);
    PyBuffer_Release(&data);
    PyBuffer_Release(&records);
    return NULL;
}

/* -- the Viterbi ---------------------------------------------------------------------------- */

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

#define MAX_CHARS (INT32_MAX - 1) /* positions are int32; the caller runs longer words in Python */

/* Per end position: where the best node ending there starts (-1: unset) and its id. After the
 * backtrack, `start` of each node on the path holds the next node's end instead (-1: last). */
typedef struct {
    int32_t start;
    int32_t id;
} Link;

/* The edge from the root by `cp`, or NULL. */
static inline const Slot *first_edge(const Trie *t, uint32_t cp) {
    Py_ssize_t slot = cp < t->root_size ? (Py_ssize_t)t->root[cp] - 1 : trie_find(t, 0, cp);
    return slot < 0 ? NULL : &t->slots[slot];
}

/* The next edge of the walk from `edge` by `cp`, or NULL. */
static inline const Slot *next_edge(const Trie *t, const Slot *edge, uint32_t cp) {
    Py_ssize_t slot = trie_find(t, edge->child, cp);
    return slot < 0 ? NULL : &t->slots[slot];
}

/* float64 (HF, llama.cpp) over the code points of `data` (a str's `kind`). Returns -1, or the
 * position of an unknown character that would win with `raise_unknown` (the pure loop raises
 * there). Written once, inlined with a constant kind for each of the three kinds. */
static ALWAYS_INLINE Py_ssize_t walk64(const Lattice *L, int kind, const void *data, Py_ssize_t n, double *best,
                                       Link *link) {
    const Trie *t = &L->trie;
    for (Py_ssize_t start = 0; start < n; start++) {
        double here = best[start];
        int single = 0;
        const Slot *edge = first_edge(t, (uint32_t)PyUnicode_READ(kind, data, start));
        for (Py_ssize_t end = start + 1; edge; end++) {
            int32_t id = edge->id;
            if (id >= 0) {
                single |= end == start + 1;
                double offer = here + L->scores[id];
                if (link[end].start < 0 || offer > best[end]) {
                    best[end] = offer;
                    link[end].start = (int32_t)start;
                    link[end].id = id;
                }
            }
            if (end == n) break;
            edge = next_edge(t, edge, (uint32_t)PyUnicode_READ(kind, data, end));
        }
        if (!single) {
            double offer = here + L->unk_score;
            if (link[start + 1].start < 0 || offer > best[start + 1]) {
                if (L->raise_unknown) return start;
                best[start + 1] = offer;
                link[start + 1].start = (int32_t)start;
                link[start + 1].id = L->unk_id;
            }
        }
    }
    return -1;
}

static Py_ssize_t viterbi64(const Lattice *L, int kind, const void *data, Py_ssize_t n, double *best, Link *link) {
    switch (kind) {
    case PyUnicode_1BYTE_KIND: return walk64(L, PyUnicode_1BYTE_KIND, data, n, best, link);
    case PyUnicode_2BYTE_KIND: return walk64(L, PyUnicode_2BYTE_KIND, data, n, best, link);
    default: return walk64(L, PyUnicode_4BYTE_KIND, data, n, best, link);
    }
}

static inline float round32(double value) { return (float)value; }

/* float32 (sentencepiece): every offer is the double sum stored into a float; the reset shift. */
static ALWAYS_INLINE void walk32(const Lattice *L, int kind, const void *data, Py_ssize_t n, float *best,
                                 Link *link) {
    const Trie *t = &L->trie;
    Py_ssize_t frontier = 0;
    for (Py_ssize_t start = 0; start < n; start++) {
        double here = (double)best[start];
        if (!(here >= -SHIFT_AT && here <= SHIFT_AT)) { /* NaN shifts too, as in the pure loop */
            for (Py_ssize_t i = start; i <= frontier; i++)
                if (i == start || link[i].start != -1) best[i] = round32((double)best[i] - here);
            here = 0.0;
        }
        int single = 0;
        const Slot *edge = first_edge(t, (uint32_t)PyUnicode_READ(kind, data, start));
        for (Py_ssize_t end = start + 1; edge; end++) {
            int32_t id = edge->id;
            if (id >= 0) {
                single |= end == start + 1;
                if (end > frontier) frontier = end;
                float offer = round32(here + L->scores[id]);
                if (link[end].start < 0 || offer > best[end]) {
                    best[end] = offer;
                    link[end].start = (int32_t)start;
                    link[end].id = id;
                }
            }
            if (end == n) break;
            edge = next_edge(t, edge, (uint32_t)PyUnicode_READ(kind, data, end));
        }
        if (!single) {
            if (start + 1 > frontier) frontier = start + 1;
            float offer = round32(here + L->unk_score);
            if (link[start + 1].start < 0 || offer > best[start + 1]) {
                best[start + 1] = offer;
                link[start + 1].start = (int32_t)start;
                link[start + 1].id = L->unk_id;
            }
        }
    }
}

static void viterbi32(const Lattice *L, int kind, const void *data, Py_ssize_t n, float *best, Link *link) {
    switch (kind) {
    case PyUnicode_1BYTE_KIND: walk32(L, PyUnicode_1BYTE_KIND, data, n, best, link); break;
    case PyUnicode_2BYTE_KIND: walk32(L, PyUnicode_2BYTE_KIND, data, n, best, link); break;
    default: walk32(L, PyUnicode_4BYTE_KIND, data, n, best, link); break;
    }
}

/* A new reference to the int of `id` (the unknown node's for an id out of range), or NULL with
 * an exception set. Called with the GIL held. */
static inline PyObject *id_object(Lattice *L, int32_t id) {
    if (id < 0 || id >= L->size) return Py_NewRef(L->unk_object);
    PyObject *object = L->id_objects[id];
    if (!object) {
        object = PyLong_FromLong(id);
        if (!object) return NULL;
        L->id_objects[id] = object;
    }
    return Py_NewRef(object);
}

/* The final ids of a path holding unknown nodes, with unknown_runs="collapse" (unigram.py
 * `_rewrite_unknown`): without byte fallback, each run of unknown nodes is one unknown id
 * (`collapse_runs`); with it, each unknown node is the <0xHH> pieces of its text's UTF-8
 * bytes (`_spell_unknown`, `spell_bytes`: EncodeError when a byte has no piece).
 * The path is linked forward: `first` is the first node's end, link[end].start the next one's. */
static PyObject *collapsed(Lattice *L, int kind, const void *data, Py_ssize_t first, const Link *link) {
    Py_ssize_t total = 0;
    int in_run = 0;
    for (Py_ssize_t end = first, start = 0; end > 0; start = end, end = link[end].start) {
        if (link[end].id != L->unk_id) {
            total++;
            in_run = 0;
        } else if (L->byte_fallback) {
            unsigned char bytes[4];
            for (Py_ssize_t i = start; i < end; i++) total += utf8_encode(PyUnicode_READ(kind, data, i), bytes);
        } else {
            total += !in_run;
            in_run = 1;
        }
    }
    PyObject *ids = PyList_New(total);
    if (!ids) return NULL;
    Py_ssize_t k = 0;
    in_run = 0;
    for (Py_ssize_t end = first, start = 0; end > 0; start = end, end = link[end].start) {
        int32_t id = link[end].id;
        if (id != L->unk_id) {
            if (k == total) goto miscounted;
            PyObject *object = id_object(L, id);
            if (!object) goto fail;
            PyList_SET_ITEM(ids, k++, object);
            in_run = 0;
        } else if (L->byte_fallback) {
            for (Py_ssize_t i = start; i < end; i++) {
                unsigned char bytes[4];
                int length = utf8_encode(PyUnicode_READ(kind, data, i), bytes);
                for (int b = 0; b < length; b++) {
                    int32_t byte_id = L->byte_ids[bytes[b]];
                    if (byte_id < 0) {
                        static const char hex[] = "0123456789ABCDEF";
                        PyErr_Format(encode_error, "byte fallback: the vocabulary has no piece '<0x%c%c>'",
                                     hex[bytes[b] >> 4], hex[bytes[b] & 15]);
                        Py_DECREF(ids);
                        return NULL;
                    }
                    if (k == total) goto miscounted;
                    PyObject *object = id_object(L, byte_id);
                    if (!object) goto fail;
                    PyList_SET_ITEM(ids, k++, object);
                }
            }
        } else if (!in_run) {
            if (k == total) goto miscounted;
            PyObject *object = id_object(L, id);
            if (!object) goto fail;
            PyList_SET_ITEM(ids, k++, object);
            in_run = 1;
        }
    }
    if (k != total) goto miscounted;
    PyObject *result = PyTuple_Pack(2, ids, Py_None);
    Py_DECREF(ids);
    return result;
miscounted: /* the two passes disagree: a bug, reported rather than written out of bounds */
    PyErr_SetString(PyExc_SystemError, "unigram: unknown-run rewrite miscounted");
fail:
    Py_DECREF(ids);
    return NULL;
}

/* The id of the piece spelt by code points [start, end) of `data`, or -1 (the trie's exact walk). */
static int32_t piece_id(const Lattice *L, int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    const Slot *edge = first_edge(&L->trie, (uint32_t)PyUnicode_READ(kind, data, start));
    for (Py_ssize_t i = start + 1; edge && i < end; i++)
        edge = next_edge(&L->trie, edge, (uint32_t)PyUnicode_READ(kind, data, i));
    return edge ? edge->id : -1;
}

/* The ids of one fused run [start, end) (unigram.py `_unknown`) into out[...] when `out` is not
 * NULL; returns how many: the piece the run spells, else with byte fallback its <0xHH> pieces
 * when each exists, else the unknown id. -1: a lone surrogate to spell, which Python's
 * str.encode refuses (the caller leaves the run to the pure rewrite, which raises). */
static Py_ssize_t fused_run(const Lattice *L, int kind, const void *data, Py_ssize_t start, Py_ssize_t end,
                            int32_t *out) {
    int32_t known = piece_id(L, kind, data, start, end);
    if (known >= 0) {
        if (out) out[0] = known;
        return 1;
    }
    if (L->byte_fallback) {
        for (Py_ssize_t i = start; i < end; i++) /* the whole run is encoded before any byte is looked up */
            if (Py_UNICODE_IS_SURROGATE(PyUnicode_READ(kind, data, i))) return -1;
        Py_ssize_t count = 0;
        for (Py_ssize_t i = start; i < end; i++) { /* each byte has its piece: counted before any is written */
            unsigned char bytes[4];
            int length = utf8_encode(PyUnicode_READ(kind, data, i), bytes);
            for (int b = 0; b < length; b++)
                if (L->byte_ids[bytes[b]] < 0) goto unknown;
            count += length;
        }
        for (Py_ssize_t i = start, k = 0; out && i < end; i++) {
            unsigned char bytes[4];
            int length = utf8_encode(PyUnicode_READ(kind, data, i), bytes);
            for (int b = 0; b < length; b++) out[k++] = L->byte_ids[bytes[b]];
        }
        return count;
    }
unknown:
    if (out) out[0] = L->unk_id;
    return 1;
}

/* The final ids of a path holding unknown nodes, with unknown_runs="fuse" (unigram.py
 * `_fuse_unknown`): each run of nodes whose id is the unknown id (a literal unknown piece
 * included) is one string, rewritten by `fused_run`. Linked forward as in `collapsed`. NULL
 * without an exception: a run `fused_run` leaves to the caller. */
static PyObject *fused(Lattice *L, int kind, const void *data, Py_ssize_t first, const Link *link) {
    Py_ssize_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        int32_t *out = NULL;
        if (pass == 1) {
            out = PyMem_RawMalloc((size_t)(total ? total : 1) * sizeof(int32_t)); /* the sanitizer sees raw blocks */
            if (!out) return PyErr_NoMemory();
        }
        Py_ssize_t k = 0;
        for (Py_ssize_t end = first, start = 0; end > 0;) {
            if (link[end].id != L->unk_id) {
                if (out) out[k] = link[end].id;
                k++;
                start = end;
                end = link[end].start;
                continue;
            }
            Py_ssize_t run_start = start;
            while (end > 0 && link[end].id == L->unk_id) {
                start = end;
                end = link[end].start;
            }
            Py_ssize_t count = fused_run(L, kind, data, run_start, start, out ? out + k : NULL);
            if (count < 0) {
                PyMem_RawFree(out);
                return NULL;
            }
            k += count;
        }
        if (pass == 0) {
            total = k;
            continue;
        }
        PyObject *ids = PyList_New(total);
        for (Py_ssize_t i = 0; ids && i < total; i++) {
            PyObject *object = id_object(L, out[i]);
            if (!object) Py_CLEAR(ids);
            else PyList_SET_ITEM(ids, i, object);
        }
        PyMem_RawFree(out);
        if (!ids) return NULL;
        PyObject *result = PyTuple_Pack(2, ids, Py_None);
        Py_DECREF(ids);
        return result;
    }
    return NULL; /* not reached */
}

/* nodes(word, with_ends) -> (ids, ends | None)
 * with_ends true: the best path's node ids, first to last (unknown nodes as unk_id, or -1),
 * and the list of where each ends. with_ends false: (ids, None) when the ids are final (no
 * unknown node, or unknown runs rewritten here: "collapse", or "fuse" with `fuse`), else the
 * nodes and their ends (unknown_runs="fuse" without `fuse`, which the caller rewrites). */
static PyObject *Lattice_nodes(Lattice *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "nodes(word: str, with_ends: bool)");
        return NULL;
    }
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Lattice is not initialised");
        return NULL;
    }
    PyObject *word = args[0];
    int with_ends = PyObject_IsTrue(args[1]);
    if (with_ends < 0) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n == 0) {
        PyObject *ids = PyList_New(0);
        if (!ids) return NULL;
        PyObject *ends = with_ends ? PyList_New(0) : Py_NewRef(Py_None);
        if (!ends) {
            Py_DECREF(ids);
            return NULL;
        }
        return Py_BuildValue("(NN)", ids, ends);
    }
    if (n > MAX_CHARS) {
        PyErr_SetString(PyExc_OverflowError, "word too long for the compiled Viterbi");
        return NULL;
    }
    size_t slots = (size_t)n + 1;
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    Link *link = PyMem_Malloc(slots * sizeof(Link));
    void *best = PyMem_Malloc(slots * (self->float32 ? sizeof(float) : sizeof(double)));
    PyObject *result = NULL, *ids = NULL, *ends = NULL;
    if (!link || !best) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < slots; i++) link[i].start = -1;
    if (self->float32) ((float *)best)[0] = 0.0f; /* unset scores are never read: `start` says so */
    else ((double *)best)[0] = 0.0;
    Py_ssize_t unknown_at = -1;
    if (n >= GIL_FREE_CHARS) {
        Py_BEGIN_ALLOW_THREADS
        if (self->float32) viterbi32(self, kind, data, n, best, link);
        else unknown_at = viterbi64(self, kind, data, n, best, link);
        Py_END_ALLOW_THREADS
    } else if (self->float32) {
        viterbi32(self, kind, data, n, best, link);
    } else {
        unknown_at = viterbi64(self, kind, data, n, best, link);
    }
    if (unknown_at >= 0) {
        PyObject *ch = PyUnicode_Substring(word, unknown_at, unknown_at + 1);
        if (ch) {
            PyErr_Format(encode_error, "Encountered an unknown token but `unk_id` is missing (character %R has no piece)",
                         ch);
            Py_DECREF(ch);
        }
        goto done;
    }
    /* Backtrack: count the nodes and link them forward (link[end].start becomes the next node's end). */
    Py_ssize_t count = 0, unknown = 0;
    int32_t next = -1;
    for (Py_ssize_t end = n; end > 0;) {
        int32_t start = link[end].start;
        count++;
        unknown |= link[end].id == self->unk_id;
        link[end].start = next;
        next = (int32_t)end;
        end = start;
    }
    Py_ssize_t first = next;
    if (unknown && !with_ends && (self->collapse || self->fuse)) {
        result = self->collapse ? collapsed(self, kind, data, first, link) : fused(self, kind, data, first, link);
        if (result || PyErr_Occurred()) goto done;
    }
    ids = PyList_New(count);
    if (!ids) goto done;
    if (with_ends || unknown) {
        ends = PyList_New(count);
        if (!ends) goto done;
    } else {
        ends = Py_NewRef(Py_None);
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t end = first; end > 0; end = link[end].start, k++) {
        PyObject *object = id_object(self, link[end].id);
        if (!object) goto done;
        PyList_SET_ITEM(ids, k, object);
        if (ends != Py_None) {
            PyObject *e = PyLong_FromSsize_t(end);
            if (!e) goto done;
            PyList_SET_ITEM(ends, k, e);
        }
    }
    result = PyTuple_Pack(2, ids, ends);
done:
    Py_XDECREF(ids);
    Py_XDECREF(ends);
    PyMem_Free(link);
    PyMem_Free(best);
    return result;
}

/* The final ids of `word` (a new list): nodes(word, False)'s when they are final, else
 * fallback(word)'s (a word past MAX_CHARS included). */
static PyObject *word_ids(Lattice *self, PyObject *word, PyObject *fallback) {
    if (PyUnicode_GET_LENGTH(word) <= MAX_CHARS) {
        PyObject *args[2] = {word, Py_False};
        PyObject *found = Lattice_nodes(self, args, 2);
        if (!found) return NULL;
        if (PyTuple_GET_ITEM(found, 1) == Py_None) {
            PyObject *ids = Py_NewRef(PyTuple_GET_ITEM(found, 0));
            Py_DECREF(found);
            return ids;
        }
        Py_DECREF(found);
    }
    PyObject *ids = PyObject_CallOneArg(fallback, word);
    if (ids && !PyList_Check(ids)) {
        PyErr_SetString(PyExc_TypeError, "fallback must return a list of ids");
        Py_CLEAR(ids);
    }
    return ids;
}

/* ids_all(words, cache, limit, cached_chars, fallback) -> the ids of every word, concatenated
 * (unigram.py `Unigram.tokenize_all`, the loop of `tokenize`): each word's ids from `cache` (a dict
 * of word -> list of ids), else `word_ids`; a new word shorter than `cached_chars` is stored in the
 * cache, emptied first when it holds `limit` words (`WordCache.remember`). */
static PyObject *Lattice_ids_all(Lattice *self, PyObject *args) {
    PyObject *words, *cache, *fallback;
    Py_ssize_t limit, cached_chars;
    if (!PyArg_ParseTuple(args, "O!O!nnO:ids_all", &PyList_Type, &words, &PyDict_Type, &cache, &limit, &cached_chars,
                          &fallback))
        return NULL;
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Lattice is not initialised");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    /* the fallback runs Python code: the list's size and items are read afresh each step */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(words); i++) {
        PyObject *word = Py_NewRef(PyList_GET_ITEM(words, i));
        PyObject *ids = NULL;
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            goto fail;
        }
        ids = PyDict_GetItemWithError(cache, word);
        if (ids) {
            Py_INCREF(ids);
        } else {
            if (PyErr_Occurred()) goto fail;
            ids = word_ids(self, word, fallback);
            if (!ids) goto fail;
            if (PyUnicode_GET_LENGTH(word) < cached_chars) {
                if (PyDict_GET_SIZE(cache) >= limit) PyDict_Clear(cache);
                if (PyDict_SetItem(cache, word, ids) < 0) goto fail;
            }
        }
        if (!PyList_Check(ids)) {
            PyErr_SetString(PyExc_TypeError, "a cached word's ids must be a list");
            goto fail;
        }
        Py_ssize_t size = PyList_GET_SIZE(out);
        if (PyList_SetSlice(out, size, size, ids) < 0) goto fail;
        Py_DECREF(ids);
        Py_DECREF(word);
        continue;
    fail:
        Py_XDECREF(ids);
        Py_DECREF(word);
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* The capsule's `text_ids` (kernel_api.h): `nodes(word, False)` on code points, without the GIL.
 * Decides only where the ids are final there: no unknown node, or unknown_runs="collapse" with an
 * unknown id (runs collapsed) or byte fallback (each unknown node spelled; a byte without a piece
 * leaves it to the pure path, which raises). */
static int api_text_ids(PyObject *lattice, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count) {
    const Lattice *L = (const Lattice *)lattice;
    *count = 0;
    if (!L->ready || n > MAX_CHARS) return 1;
    if (n == 0) return 0;
    size_t slots = (size_t)n + 1;
    Link *link = PyMem_RawMalloc(slots * sizeof(Link));
    void *best = PyMem_RawMalloc(slots * (L->float32 ? sizeof(float) : sizeof(double)));
    int status = -1;
    if (!link || !best) goto done;
    for (size_t i = 0; i < slots; i++) link[i].start = -1;
    status = 1;
    if (L->float32) {
        ((float *)best)[0] = 0.0f;
        walk32(L, PyUnicode_4BYTE_KIND, cps, n, best, link);
    } else {
        ((double *)best)[0] = 0.0;
        if (walk64(L, PyUnicode_4BYTE_KIND, cps, n, best, link) >= 0) goto done; /* the pure path raises */
    }
    int unknown = 0;
    int32_t next = -1;
    for (Py_ssize_t end = n; end > 0;) {
        int32_t start = link[end].start;
        int32_t id = link[end].id;
        if (id == L->unk_id) unknown = 1;
        else if (id < 0 || id >= L->size) goto done;
        link[end].start = next;
        next = (int32_t)end;
        end = start;
    }
    if (unknown && (!L->collapse || L->unk_id < 0 || L->unk_id >= L->size)) goto done;
    Py_ssize_t k = 0;
    int in_run = 0;
    for (Py_ssize_t end = next, start = 0; end > 0; start = end, end = link[end].start) {
        int32_t id = link[end].id;
        if (id != L->unk_id) {
            out[k++] = id;
            in_run = 0;
        } else if (L->byte_fallback) {
            for (Py_ssize_t i = start; i < end; i++) {
                unsigned char bytes[4];
                int length = utf8_encode(cps[i], bytes);
                for (int b = 0; b < length; b++) {
                    if (L->byte_ids[bytes[b]] < 0) goto done;
                    out[k++] = L->byte_ids[bytes[b]];
                }
            }
        } else if (!in_run) {
            out[k++] = id;
            in_run = 1;
        }
    }
    *count = k;
    status = 0;
done:
    PyMem_RawFree(link);
    PyMem_RawFree(best);
    return status;
}

static PyObject *Lattice_reduce(Lattice *self, PyObject *unused) {
    PyErr_SetString(PyExc_TypeError, "a Lattice is not picklable: its owner rebuilds it after unpickling");
    return NULL;
}

static PyMethodDef Lattice_methods[] = {
    {"nodes", (PyCFunction)(void (*)(void))Lattice_nodes, METH_FASTCALL,
     "nodes(word, with_ends) -> (ids, ends or None): the best path's ids and where each ends"},
    {"ids_all", (PyCFunction)Lattice_ids_all, METH_VARARGS,
     "ids_all(words, cache, limit, cached_chars, fallback) -> the final ids of every word, concatenated, "
     "through the word cache"},
    {"from_vocab", (PyCFunction)Lattice_from_vocab, METH_VARARGS | METH_CLASS,
     "from_vocab(data, records, unk_id, unk_score, float32, raise_unknown, collapse, byte_ids) -> Lattice: the "
     "trie and scores of a sentencepiece .model straight from spm_model's records"},
    {"__reduce__", (PyCFunction)Lattice_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LatticeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.unigram.Lattice",
    .tp_doc = "The matchable pieces of one Unigram vocabulary (a trie) and their scores; nodes() runs the Viterbi.",
    .tp_basicsize = sizeof(Lattice),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Lattice_init,
    .tp_dealloc = (destructor)Lattice_dealloc,
    .tp_methods = Lattice_methods,
};

static struct PyModuleDef unigram_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "polytok._kernels.unigram",
    .m_doc = "The Unigram model's Viterbi best path (polytok.models.unigram), compiled.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit_unigram(void) {
    if (PyType_Ready(&LatticeType) < 0) return NULL;
    PyObject *errors = PyImport_ImportModule("polytok.errors");
    if (!errors) return NULL;
    Py_XSETREF(encode_error, PyObject_GetAttrString(errors, "EncodeError"));
    Py_DECREF(errors);
    if (!encode_error) return NULL;
    PyObject *m = PyModule_Create(&unigram_module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Lattice", (PyObject *)&LatticeType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    static UnigramAPI api;
    api.type = &LatticeType;
    api.text_ids = api_text_ids;
    PyObject *capsule = PyCapsule_New(&api, UNIGRAM_API_NAME, NULL);
    if (!capsule || PyModule_AddObjectRef(m, "_C_API", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(capsule);
    return m;
}
