// Non-variadic wrappers over libedit: el_set, el_get and history are C variadic functions,
// which Swift cannot call. The C stdin/stdout globals are passed from here for the same reason.
#include <stdio.h>
#include <wchar.h>
#include <unistd.h>
#include <histedit.h>

static inline EditLine *rtdb_el_init(const char *prog) { return el_init(prog, stdin, stdout, stderr); }
static inline int rtdb_el_set_prompt(EditLine *el, char *(*f)(EditLine *)) { return el_set(el, EL_PROMPT, f); }
static inline int rtdb_el_set_editor(EditLine *el, const char *mode) { return el_set(el, EL_EDITOR, mode); }
static inline int rtdb_el_set_signal(EditLine *el, int on) { return el_set(el, EL_SIGNAL, on); }
static inline int rtdb_el_set_history(EditLine *el, History *h) { return el_set(el, EL_HIST, history, h); }
static inline int rtdb_el_add_function(EditLine *el, const char *name, const char *help,
                                       unsigned char (*f)(EditLine *, int)) {
    return el_set(el, EL_ADDFN, name, help, f);
}
static inline int rtdb_el_bind(EditLine *el, const char *key, const char *fn) { return el_set(el, EL_BIND, key, fn, NULL); }
static inline int rtdb_el_set_getc(EditLine *el, int (*f)(EditLine *, wchar_t *)) { return el_set(el, EL_GETCFN, f); }
static inline int rtdb_el_set_clientdata(EditLine *el, void *data) { return el_set(el, EL_CLIENTDATA, data); }
static inline void *rtdb_el_get_clientdata(EditLine *el) {
    void *data = NULL;
    el_get(el, EL_CLIENTDATA, &data);
    return data;
}
static inline int rtdb_el_refresh(EditLine *el) { return el_set(el, EL_REFRESH); }

// The columns a character takes, as libedit lays the line out (wchar.h declares wcwidth only
// for X/Open, which Swift's import does not ask for).
int wcwidth(wchar_t c);
static inline int rtdb_wcwidth(wchar_t c) { return wcwidth(c); }

static inline History *rtdb_history_init(int size) {
    HistEvent ev;
    History *h = history_init();
    history(h, &ev, H_SETSIZE, size);
    history(h, &ev, H_SETUNIQUE, 1);
    return h;
}
static inline int rtdb_history_enter(History *h, const char *line) { HistEvent ev; return history(h, &ev, H_ENTER, line); }
static inline int rtdb_history_load(History *h, const char *file) { HistEvent ev; return history(h, &ev, H_LOAD, file); }
static inline int rtdb_history_save(History *h, const char *file) { HistEvent ev; return history(h, &ev, H_SAVE, file); }

// Walks the history from the oldest entry to the newest: NULL when there are no more.
static inline const char *rtdb_history_oldest(History *h) {
    HistEvent ev;
    return history(h, &ev, H_LAST) == 0 ? ev.str : NULL;
}
static inline const char *rtdb_history_newer(History *h) {
    HistEvent ev;
    return history(h, &ev, H_PREV) == 0 ? ev.str : NULL;
}
