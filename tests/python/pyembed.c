/* pyembed.c - a Python interpreter linked statically into a program that
 * does not export its symbols (no --export-dynamic): _PyRuntime is then only
 * in the program's .symtab, where the walker must find it (exesyms.c). The
 * walker's test entry points are a built-in module `xpt` with the names of
 * pyframes-take.c's (each take releases the GIL), so pyframes_workload.py
 * runs unchanged:
 *   pyembed tests/python/pyframes_workload.py /tmp/out.xpr
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

int xpt_start(const char *path, unsigned copy, int py);
void xpt_take(uint64_t correlation_id);
int xpt_take_native_thread(uint64_t correlation_id);
void xpt_finish(void);

static PyObject *m_start(PyObject *self, PyObject *args)
{
	const char *path;
	unsigned copy;
	int py;

	(void)self;
	if (!PyArg_ParseTuple(args, "yIi", &path, &copy, &py))
		return NULL;
	return PyLong_FromLong(xpt_start(path, copy, py));
}

static PyObject *m_take(PyObject *self, PyObject *arg)
{
	unsigned long long corr = PyLong_AsUnsignedLongLong(arg);

	(void)self;
	if (PyErr_Occurred())
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	xpt_take(corr);
	Py_END_ALLOW_THREADS
	Py_RETURN_NONE;
}

static PyObject *m_native(PyObject *self, PyObject *arg)
{
	unsigned long long corr = PyLong_AsUnsignedLongLong(arg);
	int err;

	(void)self;
	if (PyErr_Occurred())
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	err = xpt_take_native_thread(corr);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(err);
}

static PyObject *m_finish(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	xpt_finish();
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "xpt_start", m_start, METH_VARARGS, NULL },
	{ "xpt_take", m_take, METH_O, NULL },
	{ "xpt_take_native_thread", m_native, METH_O, NULL },
	{ "xpt_finish", m_finish, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "xpt", NULL, -1, methods,
				     NULL, NULL, NULL, NULL };

static PyObject *init_xpt(void)
{
	return PyModule_Create(&module);
}

int main(int argc, char **argv)
{
	char *args[3];
	PyConfig config;
	PyStatus st;
	FILE *f;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: pyembed WORKLOAD.py OUTFILE\n");
		return 2;
	}
	args[0] = argv[1];
	args[1] = "builtin:xpt";
	args[2] = argv[2];
	PyImport_AppendInittab("xpt", init_xpt);
	PyConfig_InitPythonConfig(&config);
	config.parse_argv = 0;
	st = PyConfig_SetBytesArgv(&config, 3, args);
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st))
		Py_ExitStatusException(st);
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	rc = PyRun_SimpleFileExFlags(f, argv[1], 1, NULL);
	if (Py_FinalizeEx() < 0)
		rc = 1;
	return rc ? 1 : 0;
}
