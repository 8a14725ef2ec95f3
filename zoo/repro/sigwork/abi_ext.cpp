// A compiled extension built with the pre-C++11 std::string ABI against a torch that uses the new ABI.
#include <Python.h>
#include <c10/util/Exception.h>
static PyObject* check(PyObject*, PyObject*) { TORCH_CHECK(false, "never reached: ", std::string("abi")); Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"check", check, METH_NOARGS, ""}, {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "abi_ext", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_abi_ext(void) { return PyModule_Create(&mod); }
