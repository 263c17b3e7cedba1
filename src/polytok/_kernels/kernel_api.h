/* The C entry points one kernel offers another, through a capsule (the CPython pattern of
 * `datetime.datetime_CAPI`): each module that offers one stores a struct of function pointers
 * in its `_C_API` attribute, and a user imports it with `PyCapsule_Import`.
 *
 * Every function here runs without the GIL: it touches no Python object (not even a refcount),
 * reads only its object's tables, which are fixed once built, allocates with the raw allocator,
 * and keeps its scratch per call, so several threads may call it at once. The caller holds a
 * reference to the object for the whole call. Each returns 0 (done), 1 (the kernel does not
 * decide: the pure path must run for this input) or -1 (out of memory).
 */
#ifndef POLYTOK_KERNEL_API_H
#define POLYTOK_KERNEL_API_H

#include <Python.h>
#include <stdint.h>

/* polytok._kernels.charsmap._C_API */
#define CHARSMAP_API_NAME "polytok._kernels.charsmap._C_API"
typedef struct {
    PyTypeObject *type; /* Charsmap */
    /* sentencepiece's normalize (`Charsmap.sentencepiece`) of `size` bytes of valid UTF-8; the
     * result in *out (raw-allocated, the caller frees it with PyMem_RawFree) and *out_size. */
    int (*sentencepiece)(PyObject *charsmap, const unsigned char *text, Py_ssize_t size,
                         const unsigned char *space, Py_ssize_t space_len, int prefix, int suffix,
                         int remove_extra, char **out, Py_ssize_t *out_size);
} CharsmapAPI;

/* polytok._kernels.split._C_API */
#define SPLIT_API_NAME "polytok._kernels.split._C_API"
typedef struct {
    /* The number of scanners; a scanner is its index (`split.SCANNERS[name]`). */
    Py_ssize_t n_scanners;
    /* The match ends of `scanner` over n code points (`split.scan`), into *ends (raw-allocated,
     * grown as needed: *capacity items; the caller frees it with PyMem_RawFree) and *count. */
    int (*scan)(Py_ssize_t scanner, const Py_UCS4 *cps, Py_ssize_t n, Py_ssize_t **ends, Py_ssize_t *capacity,
                Py_ssize_t *count);
} SplitAPI;

/* polytok._kernels.bpe_merge._C_API */
#define BPE_MERGE_API_NAME "polytok._kernels.bpe_merge._C_API"
typedef struct {
    PyTypeObject *type; /* Merger */
    /* Whether `word_ids` decides words of this Merger (a byte_level one, or one over spelt words
     * without blocked characters or ignore_merges); asked once, with the GIL. */
    int (*covers)(PyObject *merger);
    /* The ids of one word of `n` code points (`Merger.word`, uncached: a byte_level Merger merges
     * its UTF-8 bytes), written to out[0..*count); `out` has room for 4 * n ids. 1 where the pure
     * loop takes the word (a surrogate to spell in bytes, a missing unk token). */
    int (*word_ids)(PyObject *merger, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count);
    /* Where the chunk of a word of `n` code points that starts at `start` ends (`BPE._cut`: n
     * for the last chunk, and for a word that is not cut); each chunk merges alone. */
    Py_ssize_t (*chunk_end)(PyObject *merger, const Py_UCS4 *cps, Py_ssize_t n, Py_ssize_t start);
} BpeMergeAPI;

/* polytok._kernels.spm_merge._C_API */
#define SPM_MERGE_API_NAME "polytok._kernels.spm_merge._C_API"
typedef struct {
    PyTypeObject *type; /* Merger */
    /* The ids of one word of `n` code points (`Merger.ids`), written to out[0..*count); `out` has
     * room for 4 * n ids. */
    int (*word_ids)(PyObject *merger, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count);
} SpmMergeAPI;

/* polytok._kernels.unigram._C_API */
#define UNIGRAM_API_NAME "polytok._kernels.unigram._C_API"
typedef struct {
    PyTypeObject *type; /* Lattice */
    /* The final ids of `n` code points (`Lattice.nodes(word, False)` when it gives them), written
     * to out[0..*count); `out` has room for 4 * n ids. */
    int (*text_ids)(PyObject *lattice, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count);
} UnigramAPI;

#endif
