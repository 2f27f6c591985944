/* zeroc._finite: whether a JSON value holds a NaN or an infinity, for _json.dumps.
 *
 * orjson writes NaN and Infinity as null, so a text with null may hide one. Walking the value in
 * Python to find out took ten times orjson's own time (34 us for one tweet, which has nulls);
 * this walk reads the same containers orjson does, in C, without calling Python code: dicts
 * (and subclasses) by their stored values, lists and tuples by their items. Optional, like the
 * learned codec's extension: _json keeps the Python walk where it is not built.
 *
 * The value is one orjson has just written, so it holds no cycle and nests at most 255 deep.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

static PyObject *has_nonfinite(PyObject *module, PyObject *value) {
    PyObject *small[64];
    PyObject **stack = small;
    Py_ssize_t n = 0, cap = 64;
    int found = 0;
    stack[n++] = value;
    while (n > 0 && !found) {
        PyObject *v = stack[--n];
        Py_ssize_t items = 0;
        if (PyFloat_Check(v)) {
            found = !isfinite(PyFloat_AS_DOUBLE(v));
            continue;
        }
        if (PyDict_Check(v)) items = PyDict_GET_SIZE(v);
        else if (PyList_Check(v)) items = PyList_GET_SIZE(v);
        else if (PyTuple_Check(v)) items = PyTuple_GET_SIZE(v);
        else continue;
        if (n + items > cap) {
            Py_ssize_t want = cap;
            while (want < n + items) want *= 2;
            PyObject **grown = PyMem_Malloc((size_t)want * sizeof(PyObject *));
            if (grown == NULL) {
                if (stack != small) PyMem_Free(stack);
                return PyErr_NoMemory();
            }
            memcpy(grown, stack, (size_t)n * sizeof(PyObject *));
            if (stack != small) PyMem_Free(stack);
            stack = grown;
            cap = want;
        }
        /* Borrowed references: nothing below runs Python code that could change v. */
        if (PyDict_Check(v)) {
            Py_ssize_t pos = 0;
            PyObject *key, *item;
            while (PyDict_Next(v, &pos, &key, &item)) stack[n++] = item;
        } else if (PyList_Check(v)) {
            for (Py_ssize_t i = 0; i < items; i++) stack[n++] = PyList_GET_ITEM(v, i);
        } else {
            for (Py_ssize_t i = 0; i < items; i++) stack[n++] = PyTuple_GET_ITEM(v, i);
        }
    }
    if (stack != small) PyMem_Free(stack);
    return PyBool_FromLong(found);
}

static PyMethodDef methods[] = {
    {"has_nonfinite", has_nonfinite, METH_O, "Whether a JSON value holds a NaN or an infinity."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "zeroc._finite", "Whether a JSON value holds a NaN or an infinity.", -1, methods,
};

PyMODINIT_FUNC PyInit__finite(void) { return PyModule_Create(&module); }
