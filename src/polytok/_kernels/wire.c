/* The long loops of the file readers: SentencePiece's repeated ``pieces`` and GGUF's
 * string arrays and merge lines, read in one call into plain Python lists.
 *
 * The compiled half of polytok.formats.sentencepiece (read_model_proto),
 * polytok.formats.gguf_reader (_Reader.strings) and polytok.formats.gguf (_build_bpe),
 * which define the semantics. These functions never raise a FormatError: on anything
 * they do not read exactly as the pure reader does (a broken length, invalid UTF-8, an
 * unusual field), they stop or answer None, and the pure reader takes over from there,
 * so a broken file gets the pure reader's error, with its key and offset.
 *
 * Every length and offset is checked against the buffer before it is read. The GIL is
 * held throughout: every step makes a Python object.
 *
 * Wire rules: protobuf's encoding (https://protobuf.dev/programming-guides/encoding/),
 * as polytok.formats.protobuf_wire applies them; GGUF: llama.cpp ggml/src/gguf.cpp
 * (a uint64 length, then the bytes); the merge line split is llama.cpp's
 * src/llama-vocab.cpp (load: the first space at or after index 1).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A varint of at most 10 bytes at data[*pos] (before end): 1 and the value, or 0. */
static int read_varint(const unsigned char *data, Py_ssize_t *pos, Py_ssize_t end, uint64_t *value) {
    uint64_t result = 0;
    Py_ssize_t p = *pos;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end) return 0;
        unsigned char byte = data[p++];
        if (shift < 64) result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *value = result;
            *pos = p;
            return 1;
        }
    }
    return 0;
}

static double unpack_float32_le(const unsigned char *p) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFloat_Unpack4((const char *)p, 1);
#else
    return _PyFloat_Unpack4(p, 1);
#endif
}

/* One SentencePiece message in data[start:stop]: 1 with new references in *piece and
 * *score and the type in *kind, or 0 (not read here; nothing left to free), or -1 with an
 * exception set (out of memory). Fields 1 (string, at most once), 2 (float) and 3 (enum 1..6;
 * another value leaves the field unset) each keep their last value; any other field, a second
 * string, a field of the wrong wire type, a length past stop or invalid UTF-8 is 0. */
static int read_piece(const unsigned char *data, Py_ssize_t pos, Py_ssize_t stop, PyObject **piece,
                      double *score, long *kind) {
    Py_ssize_t text_at = -1, text_len = 0;
    double value = 0.0;
    long type = 1;
    while (pos < stop) {
        unsigned char tag = data[pos++];
        if (tag == 0x0A) {
            uint64_t size;
            /* a second piece: the pure walk decodes (and may refuse) the first one too */
            if (text_at >= 0) return 0;
            if (!read_varint(data, &pos, stop, &size) || size > (uint64_t)(stop - pos)) return 0;
            text_at = pos;
            text_len = (Py_ssize_t)size;
            pos += (Py_ssize_t)size;
        } else if (tag == 0x15) {
            if (stop - pos < 4) return 0;
            value = unpack_float32_le(data + pos);
            if (value == -1.0 && PyErr_Occurred()) return -1;
            pos += 4;
        } else if (tag == 0x18) {
            uint64_t raw;
            if (!read_varint(data, &pos, stop, &raw)) return 0;
            int32_t low = (int32_t)(uint32_t)(raw & 0xFFFFFFFFu);
            if (low >= 1 && low <= 6) type = low;
        } else {
            return 0;
        }
    }
    PyObject *text;
    if (text_at < 0) {
        text = PyUnicode_New(0, 0);
        if (text == NULL) return -1;
    } else {
        text = PyUnicode_DecodeUTF8((const char *)data + text_at, text_len, NULL);
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
            PyErr_Clear();
            return 0;
        }
    }
    *piece = text;
    *score = value;
    *kind = type;
    return 1;
}

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int failed = PyList_Append(list, item);
    Py_DECREF(item);
    return failed;
}

/* read_pieces(data, pos, end, pieces, scores, types) -> position
 *
 * Reads the consecutive top-level ``pieces`` entries (field 1) of a ModelProto from pos,
 * appending each one's piece, score and type to the three lists, and returns where the
 * first entry it does not read starts (another field, or one the pure reader must see). */
static PyObject *read_pieces(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    PyObject *pieces, *scores, *types;
    if (!PyArg_ParseTuple(args, "y*nnO!O!O!:read_pieces", &view, &pos, &end, &PyList_Type, &pieces,
                          &PyList_Type, &scores, &PyList_Type, &types))
        return NULL;
    if (end > view.len) end = view.len;
    if (pos < 0) pos = end;
    const unsigned char *data = (const unsigned char *)view.buf;
    while (pos < end && data[pos] == 0x0A) {
        Py_ssize_t at = pos + 1;
        uint64_t size;
        if (!read_varint(data, &at, end, &size) || size > (uint64_t)(end - at)) break;
        Py_ssize_t stop = at + (Py_ssize_t)size;
        PyObject *piece = NULL;
        double score = 0.0;
        long kind = 1;
        int found = read_piece(data, at, stop, &piece, &score, &kind);
        if (found < 0) goto fail;
        if (found == 0) break;
        if (append_new(pieces, piece) < 0) goto fail;
        if (append_new(scores, PyFloat_FromDouble(score)) < 0) goto fail;
        if (append_new(types, PyLong_FromLong(kind)) < 0) goto fail;
        pos = stop;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(pos);
fail:
    PyBuffer_Release(&view);
    return NULL;
}

/* gguf_strings(data, pos, end, count, big_endian) -> (list of str, position) or None
 *
 * ``count`` GGUF strings from pos: each a uint64 length (in the file's byte order) and that
 * many bytes of UTF-8. None when one does not fit before end or is not valid UTF-8 (the
 * pure loop then says which and where). */
static PyObject *gguf_strings(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, count;
    int big;
    if (!PyArg_ParseTuple(args, "y*nnnp:gguf_strings", &view, &pos, &end, &count, &big)) return NULL;
    if (end > view.len) end = view.len;
    const unsigned char *data = (const unsigned char *)view.buf;
    PyObject *out = NULL;
    /* every string takes at least its 8-byte length: a count that cannot fit is refused before allocating */
    if (pos < 0 || pos > end || count < 0 || count > (end - pos) / 8) goto give_up;
    out = PyList_New(count);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (end - pos < 8) goto give_up;
        uint64_t size = 0;
        for (int k = 0; k < 8; k++) {
            unsigned char byte = data[pos + (big ? k : 7 - k)];
            size = size << 8 | byte;
        }
        pos += 8;
        if (size > (uint64_t)(end - pos)) goto give_up;
        PyObject *text = PyUnicode_DecodeUTF8((const char *)data + pos, (Py_ssize_t)size, NULL);
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto fail;
            PyErr_Clear();
            goto give_up;
        }
        PyList_SET_ITEM(out, i, text);
        pos += (Py_ssize_t)size;
    }
    PyBuffer_Release(&view);
    PyObject *result = Py_BuildValue("(Nn)", out, pos);
    return result;
give_up:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

/* merge_pairs(lines) -> list of (left, right)
 *
 * Each GGUF merge line cut at its first space at or after index 1: ("", "") when it has
 * none. Duplicates are kept (the caller keeps the first of each). */
static PyObject *merge_pairs(PyObject *self, PyObject *lines) {
    if (!PyList_Check(lines)) {
        PyErr_SetString(PyExc_TypeError, "merge_pairs takes a list of str");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(lines);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    PyObject *empty = PyUnicode_New(0, 0);
    if (empty == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyUnicode_Check(line)) {
            PyErr_SetString(PyExc_TypeError, "merge_pairs takes a list of str");
            goto fail;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(line);
        Py_ssize_t cut = length > 1 ? PyUnicode_FindChar(line, ' ', 1, length, 1) : -1;
        if (cut == -2) goto fail;
        PyObject *pair;
        if (cut < 0) {
            pair = PyTuple_Pack(2, empty, empty);
        } else {
            PyObject *left = PyUnicode_Substring(line, 0, cut);
            PyObject *right = left == NULL ? NULL : PyUnicode_Substring(line, cut + 1, length);
            pair = right == NULL ? NULL : PyTuple_Pack(2, left, right);
            Py_XDECREF(left);
            Py_XDECREF(right);
        }
        if (pair == NULL) goto fail;
        PyList_SET_ITEM(out, i, pair);
    }
    Py_DECREF(empty);
    return out;
fail:
    Py_XDECREF(empty);
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"read_pieces", read_pieces, METH_VARARGS,
     "read_pieces(data, pos, end, pieces, scores, types) -> position after the ModelProto pieces read"},
    {"gguf_strings", gguf_strings, METH_VARARGS,
     "gguf_strings(data, pos, end, count, big_endian) -> (list of str, position), or None"},
    {"merge_pairs", merge_pairs, METH_O, "merge_pairs(lines) -> list of (left, right) as llama.cpp cuts them"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "wire", NULL, -1, methods};

PyMODINIT_FUNC PyInit_wire(void) { return PyModule_Create(&module); }
