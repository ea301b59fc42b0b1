/* elidename.c - see elidename.h. One pass over the demangled name with the
 * nesting depth of <> and (); only what stands at depth 0 is kept. */
#include "export/names/elidename.h"

#include <string.h>

struct sink {
	char *out;
	size_t len, used;
};

static void put(struct sink *s, const char *p, size_t n)
{
	while (n-- && s->used + 1 < s->len)
		s->out[s->used++] = *p++;
	s->out[s->used] = '\0';
}

/* "operator<", "operator()", "operator new": the operator's own characters
 * are part of the name, not a template or a parameter list. */
static size_t operator_token(const char *p)
{
	static const char *const ops[] = { "operator()", "operator<<=", "operator>>=",
		"operator<<", "operator>>", "operator<=>", "operator<=", "operator>=",
		"operator->*", "operator->", "operator<", "operator>", "operator[]" };

	/* one compare a character, not thirteen: a received name may be megabytes */
	if (*p != 'o')
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p, ops[i], strlen(ops[i])))
			return strlen(ops[i]);
	return 0;
}

/* Where the name starts: after a return type ("void ", "at::Tensor "), the
 * last space at depth 0 that is not inside "operator new" and the like. */
static const char *skip_return_type(const char *name)
{
	const char *start = name;
	int depth = 0;

	for (const char *p = name; *p; p++) {
		size_t op = operator_token(p);

		if (op) {
			p += op - 1;
			continue;
		}
		if (*p == 'o' && !strncmp(p, "operator ", 9))
			break;          /* "operator new(...)", conversion operators */
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0 && p[1] && p[1] != '[' && strncmp(p + 1, "const", 5))
			start = p + 1;
		if (*p == '(' && depth == 1 && p > name)
			break;          /* the parameter list: no return type after it */
	}
	return start;
}

void xp_elide_name(const char *name, char *out, size_t len)
{
	struct sink s = { out, len, 0 };
	const char *p = skip_return_type(name);
	int angle = 0, paren = 0;

	if (!len)
		return;
	out[0] = '\0';
	/* a full out takes nothing more */
	while (*p && s.used + 1 < s.len) {
		size_t op = angle || paren ? 0 : operator_token(p);

		if (op) {
			put(&s, p, op);
			p += op;
		} else if (!angle && !paren && !strncmp(p, "(anonymous namespace)", 21)) {
			put(&s, p, 21);
			p += 21;
		} else if (!angle && !paren && (!strncmp(p, " [clone", 7) || !strcmp(p, " const") ||
						    !strncmp(p, " const [", 8))) {
			/* "[clone .isra.0]" and a trailing const: not part of the name */
			p += p[1] == '[' ? strcspn(p + 1, "]") + 1 + (p[1 + strcspn(p + 1, "]")] != 0) :
			     6;
		} else if (*p == '<') {
			if (!angle++ && !paren)
				put(&s, "<\u2026>", strlen("<\u2026>"));
			p++;
		} else if (*p == '>' && angle) {
			angle--;
			p++;
		} else if (*p == '(') {
			if (!paren++ && !angle)
				put(&s, "()", 2);
			p++;
		} else if (*p == ')' && paren) {
			paren--;
			p++;
		} else {
			if (!angle && !paren)
				put(&s, p, 1);
			p++;
		}
	}
}
