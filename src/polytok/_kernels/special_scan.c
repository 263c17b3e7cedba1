/* The added/special-token scan every encode runs first, over the str's code points.
 *
 * The compiled half of polytok.special (which defines the semantics):
 *
 * - Trie.find_all(text): TokenTrie.find_all, the non-overlapping leftmost-longest matches of a
 *   fixed set of strings, as HF tokenizers 0.23.3 finds added tokens
 *   (tokenizers/src/tokenizer/added_vocabulary.rs, find_matches, with an aho-corasick
 *   LeftmostLongest automaton): from each position that can start a match, left to right,
 *   the longest entry that starts there wins and the scan resumes after it.
 * - Partition.split(text, parse_special): LongestFirstPartition.split, llama.cpp's
 *   tokenizer_st_partition (src/llama-vocab.cpp): entries in the order given (longest text
 *   first), each carved out of every free fragment left to right, LSTRIP/RSTRIP eating C
 *   isspace() characters around it. Instead of searching the text once per entry, one trie
 *   pass collects where every entry occurs, and the carving then walks those positions.
 *
 * Both tables are read-only once built; per-call scratch is allocated per call, so several
 * threads may share them. A text with no character that can start an entry costs one pass
 * over a 256-entry table (plus a hash probe per character above U+00FF).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Scans longer than this run without the GIL. */
#define UNLOCKED_SCAN_CHARS 8192

/* ---- a trie over code points, its edges in one open-addressing hash table ---- */

typedef struct {
    uint64_t *keys;     /* ((parent + 1) << 21) | code point; 0 = empty slot */
    int32_t *child;
    int64_t *terminal;  /* per node: a value >= 0 where an entry ends, else -1 */
    Py_ssize_t mask, n_nodes, max_nodes;
    int bits;
    uint8_t first_small[256];  /* code points below 256 that start an entry */
} CodeTrie;

static inline uint64_t edge_key(int32_t node, Py_UCS4 cp) {
    return ((uint64_t)(uint32_t)node + 1) << 21 | (uint64_t)(cp & 0x1FFFFF);
}

static inline Py_ssize_t slot_of(const CodeTrie *t, uint64_t key) {
    return (Py_ssize_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - t->bits));
}

static inline int32_t child_of(const CodeTrie *t, int32_t node, Py_UCS4 cp) {
    uint64_t key = edge_key(node, cp);
    Py_ssize_t i = slot_of(t, key);
    for (;;) {
        uint64_t k = t->keys[i];
        if (k == key) return t->child[i];
        if (k == 0) return -1;
        i = (i + 1) & t->mask;
    }
}

static inline int can_start(const CodeTrie *t, Py_UCS4 cp) {
    return cp < 256 ? t->first_small[cp] : child_of(t, 0, cp) >= 0;
}

static int32_t add_child(CodeTrie *t, int32_t node, Py_UCS4 cp) {
    uint64_t key = edge_key(node, cp);
    Py_ssize_t i = slot_of(t, key);
    for (;;) {
        uint64_t k = t->keys[i];
        if (k == key) return t->child[i];
        if (k == 0) break;
        i = (i + 1) & t->mask;
    }
    if (t->n_nodes >= t->max_nodes) return -1;  /* cannot happen: sized from the entries */
    int32_t made = (int32_t)t->n_nodes++;
    t->keys[i] = key;
    t->child[i] = made;
    t->terminal[made] = -1;
    return made;
}

static void trie_free(CodeTrie *t) {
    PyMem_Free(t->keys);
    PyMem_Free(t->child);
    PyMem_Free(t->terminal);
    t->keys = NULL;
    t->child = NULL;
    t->terminal = NULL;
}

/* Room for `chars` characters of entries. */
static int trie_init(CodeTrie *t, Py_ssize_t chars) {
    memset(t, 0, sizeof(*t));
    if (chars > INT32_MAX - 2) {
        PyErr_SetString(PyExc_OverflowError, "too many characters for the compiled table");
        return -1;
    }
    Py_ssize_t total = chars + 1;
    int bits = 4;
    while (((Py_ssize_t)1 << bits) < 2 * total) bits++;
    Py_ssize_t slots = (Py_ssize_t)1 << bits;
    t->keys = PyMem_Calloc((size_t)slots, sizeof(uint64_t));
    t->child = PyMem_Malloc((size_t)slots * sizeof(int32_t));
    t->terminal = PyMem_Malloc((size_t)total * sizeof(int64_t));
    if (t->keys == NULL || t->child == NULL || t->terminal == NULL) {
        trie_free(t);
        PyErr_NoMemory();
        return -1;
    }
    t->mask = slots - 1;
    t->bits = bits;
    t->n_nodes = 1;
    t->max_nodes = total;
    t->terminal[0] = -1;
    return 0;
}

/* The node `text` ends at, created as needed (-1: out of room). */
static int32_t trie_insert(CodeTrie *t, PyObject *text) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int32_t node = 0;
    for (Py_ssize_t i = 0; i < n && node >= 0; i++) {
        Py_UCS4 cp = PyUnicode_READ(kind, data, i);
        if (i == 0 && cp < 256) t->first_small[cp] = 1;
        node = add_child(t, node, cp);
    }
    return node;
}

/* A growable array of Py_ssize_t, per call. */
typedef struct {
    Py_ssize_t *v;
    Py_ssize_t len, cap;
} Vec;

static int vec_push3(Vec *a, Py_ssize_t x, Py_ssize_t y, Py_ssize_t z) {
    if (a->len > a->cap - 3) {
        Py_ssize_t cap = a->cap ? a->cap : 48;
        while (cap < a->len + 3) {
            if (cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(Py_ssize_t)) return -1;
            cap *= 2;
        }
        Py_ssize_t *grown = PyMem_RawRealloc(a->v, (size_t)cap * sizeof(Py_ssize_t));
        if (grown == NULL) return -1;
        a->v = grown;
        a->cap = cap;
    }
    a->v[a->len++] = x;
    a->v[a->len++] = y;
    a->v[a->len++] = z;
    return 0;
}

/* ---- Trie: TokenTrie.find_all ---- */

typedef struct {
    PyObject_HEAD
    CodeTrie trie;
} Trie;

static void Trie_dealloc(Trie *self) {
    trie_free(&self->trie);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Trie(entries: dict[str, int]) — values >= 0. */
static PyObject *Trie_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"entries", NULL};
    PyObject *entries;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!", names, &PyDict_Type, &entries)) return NULL;
    Py_ssize_t chars = 0, pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(entries, &pos, &key, &value)) {
        if (!PyUnicode_Check(key) || !PyLong_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "entries: expected str keys and int values");
            return NULL;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(key);
        if (n > INT32_MAX - chars) {
            PyErr_SetString(PyExc_OverflowError, "too many characters for the compiled table");
            return NULL;
        }
        chars += n;
    }
    Trie *self = (Trie *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    if (trie_init(&self->trie, chars) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    pos = 0;
    while (PyDict_Next(entries, &pos, &key, &value)) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(self);
            return NULL;
        }
        if (v < 0) {
            PyErr_SetString(PyExc_ValueError, "entries: values must not be negative");
            Py_DECREF(self);
            return NULL;
        }
        int32_t node = trie_insert(&self->trie, key);
        if (node < 0) {
            PyErr_SetString(PyExc_RuntimeError, "compiled table out of room");
            Py_DECREF(self);
            return NULL;
        }
        if (node > 0) self->trie.terminal[node] = (int64_t)v;  /* the empty string never matches */
    }
    return (PyObject *)self;
}

/* The leftmost-longest matches into `out` as (start, end, value) triples; -1 out of memory. */
static int scan_leftmost_longest(const CodeTrie *t, int kind, const void *data, Py_ssize_t n, Vec *out) {
    Py_ssize_t pos = 0;
    while (pos < n) {
        if (!can_start(t, PyUnicode_READ(kind, data, pos))) {
            pos++;
            continue;
        }
        int32_t node = 0;
        Py_ssize_t best_end = -1;
        int64_t best = -1;
        for (Py_ssize_t i = pos; i < n;) {
            node = child_of(t, node, PyUnicode_READ(kind, data, i));
            if (node < 0) break;
            i++;
            if (t->terminal[node] >= 0) {
                best_end = i;
                best = t->terminal[node];
            }
        }
        if (best_end < 0) {
            pos++;
            continue;
        }
        if (vec_push3(out, pos, best_end, (Py_ssize_t)best) < 0) return -1;
        pos = best_end;
    }
    return 0;
}

static PyObject *triples_to_list(const Vec *found, int none_for_negative) {
    Py_ssize_t count = found->len / 3;
    PyObject *list = PyList_New(count);
    if (list == NULL) return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        const Py_ssize_t *f = found->v + 3 * k;
        PyObject *item;
        if (none_for_negative && f[2] < 0)
            item = Py_BuildValue("(nnO)", f[0], f[1], Py_None);
        else
            item = Py_BuildValue("(nnn)", f[0], f[1], f[2]);
        if (item == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

/* Trie.find_all(text) -> list[tuple[int, int, int]] */
static PyObject *Trie_find_all(Trie *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "expected a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Vec found = {NULL, 0, 0};
    int status;
    if (n >= UNLOCKED_SCAN_CHARS) {
        Py_BEGIN_ALLOW_THREADS
        status = scan_leftmost_longest(&self->trie, kind, data, n, &found);
        Py_END_ALLOW_THREADS
    } else {
        status = scan_leftmost_longest(&self->trie, kind, data, n, &found);
    }
    PyObject *out = status < 0 ? PyErr_NoMemory() : triples_to_list(&found, 0);
    PyMem_RawFree(found.v);
    return out;
}

static PyMethodDef Trie_methods[] = {
    {"find_all", (PyCFunction)Trie_find_all, METH_O,
     "The non-overlapping leftmost-longest matches (start, end, value), in order."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TrieType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.special_scan.Trie",
    .tp_basicsize = sizeof(Trie),
    .tp_dealloc = (destructor)Trie_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Leftmost-longest matching of a fixed set of strings: Trie({text: value}).",
    .tp_methods = Trie_methods,
    .tp_new = Trie_new,
};

/* ---- Partition: LongestFirstPartition.split ---- */

typedef struct {
    PyObject_HEAD
    CodeTrie trie;          /* terminal: the group (distinct text) index */
    Py_ssize_t n_entries, n_groups;
    int64_t *ids;           /* per entry, in the order given */
    int32_t *group;         /* per entry: its text's group */
    Py_ssize_t *length;     /* per group: the text's length in code points */
    uint8_t *flags;         /* per entry: 1 always, 2 lstrip, 4 rstrip */
    uint8_t *group_always;  /* per group: some entry of it is matched even without parse_special */
    int any_always;
} Partition;

enum { ALWAYS = 1, LSTRIP = 2, RSTRIP = 4 };

static void Partition_dealloc(Partition *self) {
    trie_free(&self->trie);
    PyMem_Free(self->ids);
    PyMem_Free(self->group);
    PyMem_Free(self->length);
    PyMem_Free(self->flags);
    PyMem_Free(self->group_always);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Partition(entries: list[tuple[str, int, bool, bool, bool]]): (text, id, always, lstrip, rstrip),
 * in the order they are carved; no empty text. */
static PyObject *Partition_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"entries", NULL};
    PyObject *entries;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!", names, &PyList_Type, &entries)) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(entries), chars = 0;
    if (count > INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "too many entries for the compiled table");
        return NULL;
    }
    for (Py_ssize_t e = 0; e < count; e++) {
        PyObject *item = PyList_GET_ITEM(entries, e);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 5 || !PyUnicode_Check(PyTuple_GET_ITEM(item, 0)) ||
            PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(item, 0)) == 0 || !PyLong_Check(PyTuple_GET_ITEM(item, 1))) {
            PyErr_SetString(PyExc_TypeError, "entries: expected (text, id, always, lstrip, rstrip) with a non-empty text");
            return NULL;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(item, 0));
        if (n > INT32_MAX - chars) {
            PyErr_SetString(PyExc_OverflowError, "too many characters for the compiled table");
            return NULL;
        }
        chars += n;
    }
    Partition *self = (Partition *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    if (trie_init(&self->trie, chars) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    size_t c = (size_t)(count ? count : 1);
    self->ids = PyMem_Malloc(c * sizeof(int64_t));
    self->group = PyMem_Malloc(c * sizeof(int32_t));
    self->length = PyMem_Malloc(c * sizeof(Py_ssize_t));
    self->flags = PyMem_Malloc(c);
    self->group_always = PyMem_Calloc(c, 1);
    if (!self->ids || !self->group || !self->length || !self->flags || !self->group_always) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    self->n_entries = count;
    for (Py_ssize_t e = 0; e < count; e++) {
        PyObject *item = PyList_GET_ITEM(entries, e);
        PyObject *text = PyTuple_GET_ITEM(item, 0);
        long long id = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 1));
        if (id == -1 && PyErr_Occurred()) {
            Py_DECREF(self);
            return NULL;
        }
        if (id < 0) {
            PyErr_SetString(PyExc_ValueError, "entries: ids must not be negative");
            Py_DECREF(self);
            return NULL;
        }
        int flags = 0;
        for (int f = 0; f < 3; f++) {
            int truth = PyObject_IsTrue(PyTuple_GET_ITEM(item, 2 + f));
            if (truth < 0) {
                Py_DECREF(self);
                return NULL;
            }
            if (truth) flags |= 1 << f;
        }
        int32_t node = trie_insert(&self->trie, text);
        if (node <= 0) {
            PyErr_SetString(PyExc_RuntimeError, "compiled table out of room");
            Py_DECREF(self);
            return NULL;
        }
        if (self->trie.terminal[node] < 0) {
            self->trie.terminal[node] = self->n_groups;
            self->length[self->n_groups++] = PyUnicode_GET_LENGTH(text);
        }
        int32_t g = (int32_t)self->trie.terminal[node];
        self->ids[e] = (int64_t)id;
        self->group[e] = g;
        self->flags[e] = (uint8_t)flags;
        if (flags & ALWAYS) {
            self->group_always[g] = 1;
            self->any_always = 1;
        }
    }
    return (PyObject *)self;
}

static inline int c_space(Py_UCS4 c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Every occurrence of every active group: (start, group) pairs in `occ`, by start.
 * 1: more occurrences than `cap` (the caller falls back), -1: out of memory. */
static int collect(const Partition *p, int parse_special, int kind, const void *data, Py_ssize_t n,
                   Py_ssize_t cap, Py_ssize_t **occ, Py_ssize_t *count) {
    const CodeTrie *t = &p->trie;
    Py_ssize_t len = 0, room = 0;
    Py_ssize_t *v = NULL;
    for (Py_ssize_t pos = 0; pos < n; pos++) {
        if (!can_start(t, PyUnicode_READ(kind, data, pos))) continue;
        int32_t node = 0;
        for (Py_ssize_t i = pos; i < n;) {
            node = child_of(t, node, PyUnicode_READ(kind, data, i));
            if (node < 0) break;
            i++;
            int64_t g = t->terminal[node];
            if (g < 0 || !(parse_special || p->group_always[g])) continue;
            if (len / 2 >= cap) {
                PyMem_RawFree(v);
                return 1;
            }
            if (len + 2 > room) {
                Py_ssize_t grown_room = room ? room * 2 : 64;
                if (grown_room > 2 * cap + 2) grown_room = 2 * cap + 2; /* never past the cap's pairs */
                if (grown_room > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Py_ssize_t)) {
                    PyMem_RawFree(v);
                    return -1;
                }
                Py_ssize_t *grown = PyMem_RawRealloc(v, (size_t)grown_room * sizeof(Py_ssize_t));
                if (grown == NULL) {
                    PyMem_RawFree(v);
                    return -1;
                }
                v = grown;
                room = grown_room;
            }
            v[len++] = pos;
            v[len++] = (Py_ssize_t)g;
        }
    }
    *occ = v;
    *count = len / 2;
    return 0;
}

/* The carving of LongestFirstPartition.split over the collected occurrences.
 * `pieces` holds (start, end, id or -1) triples; 1 too many occurrences, -1 out of memory. */
static int carve_all(const Partition *p, int parse_special, int kind, const void *data, Py_ssize_t n, Vec *pieces) {
    Py_ssize_t *occ = NULL, count = 0;
    /* past 3 occurrences a character (runs of spaces under many whitespace entries: 23 a character
     * for GPT-NeoX) the pure loop answers; the pairs held stay under 48 bytes a character */
    Py_ssize_t cap = n > (PY_SSIZE_T_MAX - 4096) / 8 ? PY_SSIZE_T_MAX / 8 : 3 * n + 4096;
    int status = collect(p, parse_special, kind, data, n, cap, &occ, &count);
    if (status != 0) return status;
    if (vec_push3(pieces, 0, n, -1) < 0) {
        PyMem_RawFree(occ);
        return -1;
    }
    if (count == 0) return 0;
    /* the starts of each group's occurrences, increasing: a counting sort by group */
    Py_ssize_t groups = p->n_groups;
    Py_ssize_t *first = PyMem_RawCalloc((size_t)groups + 1, sizeof(Py_ssize_t));
    Py_ssize_t *starts = PyMem_RawMalloc((size_t)count * sizeof(Py_ssize_t));
    Py_ssize_t *fill = PyMem_RawMalloc((size_t)groups * sizeof(Py_ssize_t));
    Vec next = {NULL, 0, 0};
    status = -1;
    if (first == NULL || starts == NULL || fill == NULL) goto done;
    for (Py_ssize_t k = 0; k < count; k++) first[occ[2 * k + 1] + 1]++;
    for (Py_ssize_t g = 0; g < groups; g++) first[g + 1] += first[g];
    memcpy(fill, first, (size_t)groups * sizeof(Py_ssize_t));
    for (Py_ssize_t k = 0; k < count; k++) starts[fill[occ[2 * k + 1]]++] = occ[2 * k];

    for (Py_ssize_t e = 0; e < p->n_entries; e++) {
        int flags = p->flags[e];
        if (!(parse_special || (flags & ALWAYS))) continue;
        int32_t g = p->group[e];
        Py_ssize_t k = first[g], k_end = first[g + 1], len = p->length[g];
        if (k == k_end) continue;
        next.len = 0;
        for (Py_ssize_t q = 0; q < pieces->len; q += 3) {
            Py_ssize_t start = pieces->v[q], end = pieces->v[q + 1], id = pieces->v[q + 2];
            if (id >= 0) {
                if (vec_push3(&next, start, end, id) < 0) goto done;
                continue;
            }
            for (;;) {
                while (k < k_end && starts[k] < start) k++;
                if (k == k_end || starts[k] > end - len) break;  /* the first at >= start must fit */
                Py_ssize_t at = starts[k], left_end = at;
                if (flags & LSTRIP)
                    while (left_end > start && c_space(PyUnicode_READ(kind, data, left_end - 1))) left_end--;
                if (vec_push3(&next, start, left_end, -1) < 0 || vec_push3(&next, at, at + len, p->ids[e]) < 0)
                    goto done;
                start = at + len;
                if (flags & RSTRIP)
                    while (start < end && c_space(PyUnicode_READ(kind, data, start))) start++;
            }
            if (vec_push3(&next, start, end, -1) < 0) goto done;
        }
        Vec swap = *pieces;
        *pieces = next;
        next = swap;
    }
    status = 0;
done:
    PyMem_RawFree(occ);
    PyMem_RawFree(first);
    PyMem_RawFree(starts);
    PyMem_RawFree(fill);
    PyMem_RawFree(next.v);
    return status;
}

/* Partition.split(text, parse_special) -> list[tuple[int, int, int | None]] | None
 * (None: too many occurrences to collect; the pure loop answers). */
static PyObject *Partition_split(Partition *self, PyObject *args) {
    PyObject *text;
    int parse_special;
    if (!PyArg_ParseTuple(args, "Up", &text, &parse_special)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n == 0) return PyList_New(0);
    if (!parse_special && !self->any_always) return Py_BuildValue("[(nnO)]", (Py_ssize_t)0, n, Py_None);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Vec pieces = {NULL, 0, 0};
    int status;
    if (n >= UNLOCKED_SCAN_CHARS) {
        Py_BEGIN_ALLOW_THREADS
        status = carve_all(self, parse_special, kind, data, n, &pieces);
        Py_END_ALLOW_THREADS
    } else {
        status = carve_all(self, parse_special, kind, data, n, &pieces);
    }
    PyObject *out = NULL;
    if (status < 0) {
        PyErr_NoMemory();
    } else if (status == 1) {
        out = Py_NewRef(Py_None);
    } else {
        /* drop the empty free pieces */
        Py_ssize_t kept = 0;
        for (Py_ssize_t q = 0; q < pieces.len; q += 3) {
            if (pieces.v[q + 2] >= 0 || pieces.v[q + 1] > pieces.v[q]) {
                memmove(pieces.v + kept, pieces.v + q, 3 * sizeof(Py_ssize_t));
                kept += 3;
            }
        }
        pieces.len = kept;
        out = triples_to_list(&pieces, 1);
    }
    PyMem_RawFree(pieces.v);
    return out;
}

static PyMethodDef Partition_methods[] = {
    {"split", (PyCFunction)Partition_split, METH_VARARGS,
     "Free and special spans (start, end, id or None) in order, or None when the pure loop must run."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PartitionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.special_scan.Partition",
    .tp_basicsize = sizeof(Partition),
    .tp_dealloc = (destructor)Partition_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "llama.cpp's longest-first special-token partition: Partition([(text, id, always, lstrip, rstrip)]).",
    .tp_methods = Partition_methods,
    .tp_new = Partition_new,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "polytok._kernels.special_scan",
    "The added/special-token scan: leftmost-longest matches and llama.cpp's longest-first partition.", -1, NULL,
};

PyMODINIT_FUNC PyInit_special_scan(void) {
    if (PyType_Ready(&TrieType) < 0 || PyType_Ready(&PartitionType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    Py_INCREF(&TrieType);
    if (PyModule_AddObject(m, "Trie", (PyObject *)&TrieType) < 0) {
        Py_DECREF(&TrieType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&PartitionType);
    if (PyModule_AddObject(m, "Partition", (PyObject *)&PartitionType) < 0) {
        Py_DECREF(&PartitionType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
