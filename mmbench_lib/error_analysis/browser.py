"""Error-case browser: a pure-Python state object and a thin ipywidgets view over it.

``BrowserState`` holds the sampled error cases of one run, the filters (subject/dimension,
difficulty, image type), the cursor and the annotations; ``tag()`` writes the human category and
note of the current case to ``annotations/<run-id>.csv`` at once (temp file + ``os.replace``, via
``mmbench_lib.error_analysis.Annotations``). A new state over the same CSV starts at the first untagged
case, so tagging resumes where it stopped.

More: docs/modules.md, ``mmbench_lib/error_analysis/browser.py``.
"""
from __future__ import annotations

import html
import io
from pathlib import Path

from mmbench_lib.error_analysis import errors
from mmbench_lib.error_analysis.errors import CATEGORIES, Annotations, annotations_path, auto_tags, suggested_category

FILTERS = ("subject", "difficulty", "image_type")
ALL = "(all)"
#: keyboard: a digit -> a category (1-based, ``CATEGORIES`` order); letters -> moves
KEY_CATEGORIES = {str(k): c for k, c in enumerate(CATEGORIES, start=1)}
KEY_MOVES = {"n": "next", "p": "prev", "f": "resume"}
EMPTY = "(empty response)"
#: the browser's keyboard in the page: a key pressed while the focus is anywhere in an ``.mmb-error-browser``
#: (but in a text field or a menu) is put into its ``.mmb-keys`` box, as if typed there, and kept from
#: JupyterLab (capture phase, before its document-level shortcut handler); a click makes the browser focusable
KEYS_JS = """
(function () {
  if (window.__mmbErrorBrowserKeys) { return; }
  window.__mmbErrorBrowserKeys = true;
  const KEYS = new Set(%s);
  const inBrowser = (el) => el && el.closest ? el.closest('.mmb-error-browser') : null;
  const ownTyping = (el) => el.isContentEditable || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT'
    || (el.tagName === 'INPUT' && !['button', 'checkbox', 'radio'].includes(el.type));
  document.addEventListener('mousedown', (e) => {
    const w = inBrowser(e.target);
    if (w && !w.hasAttribute('tabindex')) {
      w.setAttribute('tabindex', '-1');
      w.setAttribute('data-lm-suppress-shortcuts', 'true');
    }
  }, true);
  document.addEventListener('keydown', (e) => {
    const w = inBrowser(e.target);
    if (!w || e.ctrlKey || e.metaKey || e.altKey || ownTyping(e.target)) { return; }
    const key = (e.key || '').toLowerCase();
    const box = w.querySelector('.mmb-keys input');
    if (!KEYS.has(key) || !box) { return; }
    e.preventDefault();
    e.stopPropagation();
    box.value = key;
    box.dispatchEvent(new Event('input', {bubbles: true}));
    if (!w.contains(document.activeElement) || document.activeElement === document.body) { w.focus(); }
  }, true);
  document.addEventListener('click', (e) => {  // a click on a button keeps the keys with the browser
    const w = inBrowser(e.target);
    if (w && !ownTyping(e.target)) { setTimeout(() => { if (!w.contains(document.activeElement)) { w.focus(); } }, 0); }
  }, true);
})();
"""


class BrowserState:
    """Cases to tag, filters, cursor and the annotations CSV of one run; no widgets involved."""

    def __init__(self, cases: list[dict], run_id: str, annotations_dir="annotations", annotator: str = ""):
        self.cases = list(cases)
        self.run_id = run_id
        self.annotator = annotator
        self.path = annotations_path(run_id, annotations_dir)
        self.annotations = Annotations(self.path)
        self.filters: dict[str, str | None] = {f: None for f in FILTERS}
        self.visible = list(self.cases)
        self.cursor = 0
        self.resume()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_run(cls, run_dir, n_sample: int = 30, stratify_by: str | None = None, seed: int = 0,
                 annotations_dir="annotations", run_id: str | None = None, annotator: str = "",
                 cases: list[dict] | None = None, sample_dir=None) -> "BrowserState":
        """Sample (or reuse ``<sample_dir>/error_sample.json``; ``sample_dir`` defaults to the run folder;
        notebook 30 keeps it in its own run folder) and open the run's annotations."""
        cases = errors.load_cases(run_dir) if cases is None else cases
        ids = errors.sample_for_run(sample_dir or run_dir, cases, n_sample, stratify_by or None, seed)
        by_id = {c["id"]: c for c in cases}
        return cls([by_id[i] for i in ids], run_id or errors.run_id_of(run_dir), annotations_dir, annotator)

    # ------------------------------------------------------------------ keys and tags
    def key(self, case: dict) -> tuple:
        return (case.get("benchmark") or "", case["id"], case.get("model") or "", self.run_id)

    def human(self, case: dict | None = None) -> tuple[str, str]:
        """``(category, note)`` given by hand to ``case`` (the current one by default)."""
        case = self.current if case is None else case
        row = self.annotations.get(self.key(case)) if case else None
        return ((row or {}).get("category", ""), (row or {}).get("note", ""))

    def is_tagged(self, case: dict) -> bool:
        return bool(self.human(case)[0])

    def auto(self, case: dict | None = None) -> tuple[list[str], str]:
        """Automatic tags of ``case`` and the category they suggest."""
        case = self.current if case is None else case
        tags = auto_tags(case) if case else []
        return tags, suggested_category(tags)

    def tag(self, category: str | None = None, note: str | None = None, case: dict | None = None) -> dict:
        """Set the human category and/or note of ``case`` (current by default) and write the CSV now."""
        case = self.current if case is None else case
        if case is None:
            raise IndexError("no case selected (the filters match nothing)")
        if category is not None and category != "" and category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; use one of {CATEGORIES}")
        old_cat, old_note = self.human(case)
        tags, suggestion = self.auto(case)
        row = dict(zip(errors.KEY, self.key(case)))
        row.update(
            subject=case.get("subject") or "", difficulty=case.get("difficulty") or "",
            image_type="; ".join(case.get("image_type") or []),
            category=old_cat if category is None else category, note=old_note if note is None else note,
            annotator=self.annotator, timestamp=errors.now(), auto_tags="; ".join(tags), auto_category=suggestion,
        )
        return self.annotations.upsert(row)

    def save(self):
        """Rewrite the CSV (every :meth:`tag` already did)."""
        return self.annotations.write()

    # ------------------------------------------------------------------ filters and cursor
    def values(self, field: str) -> list[str]:
        """Values of a filter field present in the sample."""
        out = set()
        for c in self.cases:
            v = c.get(field)
            for x in (v if isinstance(v, list) else [v]):
                if x not in (None, ""):
                    out.add(str(x))
        return sorted(out)

    def _matches(self, case: dict) -> bool:
        for f, want in self.filters.items():
            if want in (None, "", ALL):
                continue
            v = case.get(f)
            vals = [str(x) for x in (v if isinstance(v, list) else [v]) if x is not None]
            if want not in vals:
                return False
        return True

    def set_filter(self, field: str, value: str | None) -> None:
        if field not in self.filters:
            raise KeyError(f"no filter {field!r}; filters: {FILTERS}")
        self.filters[field] = None if value in (None, "", ALL) else value
        self.visible = [c for c in self.cases if self._matches(c)]
        self.resume()

    @property
    def current(self) -> dict | None:
        return self.visible[self.cursor] if 0 <= self.cursor < len(self.visible) else None

    def first_untagged(self) -> int | None:
        return next((i for i, c in enumerate(self.visible) if not self.is_tagged(c)), None)

    def resume(self) -> int:
        """Move to the first untagged visible case (the last one when all are tagged)."""
        i = self.first_untagged()
        self.cursor = i if i is not None else max(len(self.visible) - 1, 0)
        return self.cursor

    def next(self) -> int:
        self.cursor = min(self.cursor + 1, max(len(self.visible) - 1, 0))
        return self.cursor

    def prev(self) -> int:
        self.cursor = max(self.cursor - 1, 0)
        return self.cursor

    def go(self, i: int) -> int:
        self.cursor = max(0, min(int(i), max(len(self.visible) - 1, 0)))
        return self.cursor

    @property
    def progress(self) -> tuple[int, int]:
        """``(tagged, total)`` over the whole sample."""
        return sum(self.is_tagged(c) for c in self.cases), len(self.cases)

    def frame(self):
        """One row per sampled case: human tag and note (empty when untagged) and automatic tags."""
        import pandas as pd

        rows = []
        for c in self.cases:
            cat, note = self.human(c)
            tags, sug = self.auto(c)
            rows.append({**dict(zip(errors.KEY, self.key(c))), "subject": c.get("subject"), "difficulty": c.get("difficulty"),
                         "image_type": "; ".join(c.get("image_type") or []), "category": cat, "note": note,
                         "auto_tags": "; ".join(tags), "auto_category": sug})
        return pd.DataFrame(rows, columns=errors.FIELDS[:8] + ["note", "auto_tags", "auto_category"])


# ---------------------------------------------------------------------------------------------- view

def thumbnail(path, max_side: int = 256) -> bytes:
    """JPEG bytes of the image scaled to ``max_side`` (bytes travel over the comm and into saved state)."""
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        im.thumbnail((max_side, max_side))
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=85)
    return buf.getvalue()


def _images(case: dict) -> list[tuple[str, str]]:
    """``(label, path)`` of the case's images: question images, then option images, then frames."""
    it = case.get("item")
    if it is None:
        return []
    out = [(f"image {k}", p) for k, p in enumerate(it.images, start=1) if p]
    letters = it.letters
    out += [(f"option {letters[k] if k < len(letters) else k + 1}", p) for k, p in enumerate(it.choice_images) if p]
    if not out:
        out = [(f"frame {k}", p) for k, p in enumerate(it.frames[:4], start=1) if p]
    return out[:8]


def _fmt(v) -> str:
    if v is None:
        return "—"
    return html.escape(", ".join(map(str, v)) if isinstance(v, list) else str(v))


class ErrorBrowser:
    """The ipywidgets view of a :class:`BrowserState`; display it (it is a widget bundle) or its ``.widget``."""

    def __init__(self, state: BrowserState, thumb_side: int = 200, large_side: int = 800):
        import ipywidgets as W

        self.state, self.thumb_side, self.large_side = state, thumb_side, large_side
        self._busy = False
        self.log = W.Output(layout=W.Layout(max_height="12em", overflow="auto"))
        self.filters = {}
        for f in FILTERS:
            dd = W.Dropdown(options=[ALL] + state.values(f), value=ALL, description=f.replace("_", " "),
                            layout=W.Layout(width="260px"), style={"description_width": "80px"})
            dd.add_class(f"mmb-filter-{f}")
            dd.observe(self._wrap(lambda ch, f=f: self._on_filter(f, ch["new"])), names="value")
            self.filters[f] = dd
        self.prev_button = W.Button(description="◀ previous", layout=W.Layout(width="110px"))
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="110px"))
        self.resume_button = W.Button(description="first untagged", layout=W.Layout(width="130px"))
        self.position = W.HTML()
        self.header = W.HTML()
        self.header.add_class("mmb-header")
        self.thumbs = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.large = W.Image(format="jpeg", layout=W.Layout(display="none", max_width=f"{large_side}px"))
        self.large.add_class("mmb-large")
        self.question = W.HTML()
        self.options = W.HTML()
        self.response = W.HTML()
        self.suggestion = W.HTML()
        self.accept_button = W.Button(description="use suggestion", layout=W.Layout(width="130px"))
        self.category = W.Dropdown(options=[("(untagged)", "")] + [(c, c) for c in CATEGORIES], value="",
                                   description="category", style={"description_width": "70px"},
                                   layout=W.Layout(width="330px"))
        self.category.add_class("mmb-category")
        self.note = W.Textarea(placeholder="reason (free text)", description="reason", continuous_update=False,
                               style={"description_width": "70px"}, layout=W.Layout(width="520px", height="4.5em"))
        self.note.add_class("mmb-note")
        self.save_button = W.Button(description="save", button_style="primary", layout=W.Layout(width="90px"))
        self.save_next_button = W.Button(description="save & next", button_style="success", layout=W.Layout(width="120px"))
        for b, cls in ((self.save_button, "mmb-save"), (self.save_next_button, "mmb-save-next"),
                       (self.next_button, "mmb-next"), (self.prev_button, "mmb-prev"),
                       (self.resume_button, "mmb-resume"), (self.accept_button, "mmb-accept")):
            b.add_class(cls)
        self.status = W.HTML()
        self.status.add_class("mmb-status")
        self.keys = W.Text(value="", placeholder="click the browser, then type a key", description="keys",
                           continuous_update=True, style={"description_width": "70px"}, layout=W.Layout(width="330px"))
        self.keys.add_class("mmb-keys")
        self.keys_help = W.HTML(key_help())
        self.distribution = W.HTML()
        self.distribution.add_class("mmb-distribution")

        self.prev_button.on_click(self._wrap(lambda _b: self._move(self.state.prev)))
        self.next_button.on_click(self._wrap(lambda _b: self._move(self.state.next)))
        self.resume_button.on_click(self._wrap(lambda _b: self._move(self.state.resume)))
        self.save_button.on_click(self._wrap(lambda _b: self._save()))
        self.save_next_button.on_click(self._wrap(lambda _b: (self._save(), self._move(self.state.next))))
        self.accept_button.on_click(self._wrap(lambda _b: self._accept()))
        self.category.observe(self._wrap(lambda ch: self._save(category=ch["new"])), names="value")
        self.note.observe(self._wrap(lambda ch: self._save(note=ch["new"])), names="value")
        self.keys.observe(self._wrap(lambda ch: self._on_keys(ch["new"])), names="value")

        self.widget = W.VBox([
            W.HTML(f"<b>Error cases of run <code>{html.escape(state.run_id)}</code></b> — tags saved to "
                   f"<code>{html.escape(str(state.path))}</code>"),
            W.HBox(list(self.filters.values())),
            W.HBox([self.prev_button, self.next_button, self.resume_button, self.position]),
            self.header, self.thumbs, self.large, self.question, self.options, self.response,
            W.HBox([self.suggestion, self.accept_button]),
            self.category, self.note, W.HBox([self.save_button, self.save_next_button, self.status]),
            W.HBox([self.keys, self.keys_help]), self.distribution,
            self.log,
        ])
        self.widget.add_class("mmb-error-browser")
        self.render()

    # ------------------------------------------------------------------ display
    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self):
        """The widget, then the keyboard script (:data:`KEYS_JS`; run once per page)."""
        from IPython.display import Javascript, display

        display(self.widget)
        display(Javascript(keys_js()))

    def _wrap(self, fn):
        """Callback errors go to the ``Output`` under the browser (JupyterLab would hide them)."""
        def handler(*args):
            with self.log:
                return fn(*args)
        return handler

    # ------------------------------------------------------------------ actions
    def _on_filter(self, field, value):
        self.state.set_filter(field, value)
        self.render()

    def _move(self, step):
        step()
        self.render()

    def _save(self, category=None, note=None):
        if self._busy or self.state.current is None:
            return
        if category is None and note is None:
            category, note = self.category.value, self.note.value
        self.state.tag(category=category, note=note)
        tagged, total = self.state.progress
        self.status.value = f"saved {errors.now()} · {tagged} of {total} tagged by hand"
        self._render_position()
        self._render_distribution()

    def _on_keys(self, typed: str):
        """Each character typed into the keys box is one command; the box is emptied afterwards."""
        if not typed:
            return
        self.keys.value = ""
        for key in typed.lower():
            self.press(key)

    def press(self, key: str) -> None:
        """One keyboard command: ``1``-``8`` tag and go on, ``0`` untag, ``n`` / ``p`` / ``f`` move."""
        if key in KEY_CATEGORIES or key == "0":
            if self.state.current is None:
                return
            self._busy = True  # the dropdown follows without saving a second time
            try:
                self.category.value = KEY_CATEGORIES.get(key, "")
            finally:
                self._busy = False
            self._save(category=self.category.value)
            if key != "0":
                self._move(self.state.next)
        elif key in KEY_MOVES:
            self._move(getattr(self.state, KEY_MOVES[key]))

    def _accept(self):
        _tags, suggestion = self.state.auto()
        if suggestion:
            self.category.value = suggestion  # the observer saves it as a human tag

    # ------------------------------------------------------------------ rendering
    def _render_position(self):
        st = self.state
        tagged, total = st.progress
        n = len(st.visible)
        where = f"{st.cursor + 1} / {n}" if n else "0 / 0"
        self.position.value = f"&nbsp; case <b>{where}</b> shown · <b>{tagged}</b> of {total} tagged by hand"

    def _render_distribution(self):
        self.distribution.value = distribution_html(self.state.frame())

    def render(self):
        import ipywidgets as W

        st, case = self.state, self.state.current
        self._render_position()
        self._render_distribution()
        self._busy = True
        try:
            if case is None:
                self.header.value = "<i>No case matches the filters.</i>"
                for w in (self.question, self.options, self.response, self.suggestion):
                    w.value = ""
                self.thumbs.children = ()
                self.category.value, self.note.value = "", ""
                return
            it = case.get("item")
            self.header.value = (
                f"<b>{html.escape(case['id'])}</b> · {html.escape(case.get('benchmark') or '')} · "
                f"{_fmt(case.get('subject'))} ({_fmt(case.get('group'))}) · difficulty {_fmt(case.get('difficulty'))} · "
                f"image type {_fmt(case.get('image_type'))} · {_fmt(case.get('question_type'))}")
            boxes = []
            for label, path in _images(case):
                try:
                    img = W.Image(value=thumbnail(path, self.thumb_side), format="jpeg",
                                  layout=W.Layout(max_width=f"{self.thumb_side}px", max_height=f"{self.thumb_side}px"))
                except Exception as e:  # noqa: BLE001 - a missing file must not stop the browser
                    boxes.append(W.HTML(f"<i>{label}: {html.escape(str(e))}</i>"))
                    continue
                btn = W.Button(description=f"enlarge {label}", layout=W.Layout(width="auto"))
                btn.on_click(self._wrap(lambda _b, p=path: self._toggle_large(p)))
                boxes.append(W.VBox([img, btn]))
            self.thumbs.children = tuple(boxes)
            self.large.layout.display = "none"
            self._large_path = None
            q = getattr(it, "question", None)
            self.question.value = ("<div style='margin:6px 0'><b>Question.</b> "
                                   + (errors.resolve_placeholders(q, it) if q else "<i>(item data not found)</i>") + "</div>")
            self.options.value = self._options_html(case)
            self.response.value = self._response_html(case)
            tags, suggestion = st.auto(case)
            self.suggestion.value = (
                f"<span style='color:#8a5a00'>automatic: <b>{html.escape(', '.join(tags))}</b> → suggests "
                f"<b>{html.escape(suggestion)}</b> (not a human tag)</span>" if tags else
                "<span style='color:#777'>automatic: no suggestion</span>")
            self.accept_button.disabled = not suggestion
            cat, note = st.human(case)
            self.category.value = cat if cat in CATEGORIES else ""
            self.note.value = note
            self.status.value = "tagged by hand" if cat else "untagged"
        finally:
            self._busy = False

    def _toggle_large(self, path):
        if getattr(self, "_large_path", None) == path and self.large.layout.display != "none":
            self.large.layout.display = "none"
            self._large_path = None
            return
        self.large.value = thumbnail(path, self.large_side)
        self.large.layout.display = ""
        self._large_path = path

    @staticmethod
    def _options_html(case) -> str:
        it = case.get("item")
        choices = list(getattr(it, "choices", None) or [])
        scores = case.get("scores") or {}
        gold, pred = case.get("answer"), case.get("prediction")
        n = max(len(choices), max((len(v) for v in scores.values() if isinstance(v, list)), default=0))
        if not n:
            return f"<div><b>Gold answer:</b> {_fmt(gold)}</div>"
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        head = "".join(f"<th>{html.escape(k)} log-lik.</th>" for k in scores if isinstance(scores[k], list))
        rows = []
        for i in range(n):
            L = letters[i]
            marks = (" ✔ gold" if L == gold else "") + (" ✘ predicted" if L == pred and L != gold else "") \
                + (" (predicted)" if L == pred and L == gold else "")
            cells = "".join(f"<td>{v[i]:.3f}</td>" if i < len(v) and isinstance(v[i], (int, float)) else "<td></td>"
                            for v in scores.values() if isinstance(v, list))
            style = " style='background:#e6f4e6'" if L == gold else (" style='background:#fbe3e3'" if L == pred else "")
            text = html.escape(str(choices[i])) if i < len(choices) else ""
            rows.append(f"<tr{style}><td><b>{L}</b></td><td>{text}</td><td>{marks}</td>{cells}</tr>")
        return ("<table style='border-collapse:collapse'><tr><th></th><th>option</th><th></th>" + head + "</tr>"
                + "".join(rows) + f"</table><div><b>Gold answer:</b> {_fmt(gold)}</div>")

    @staticmethod
    def _response_html(case) -> str:
        parts = []
        response = case.get("response")
        empty = case.get("scores") is None and (response is None or not str(response).strip())
        if response is not None or case.get("scores") is None:
            shown = f"<i style='color:#8a5a00'>{EMPTY}</i>" if empty else html.escape(str(response))
            parts.append("<div><b>Raw response:</b><pre class='mmb-raw' style='white-space:pre-wrap;background:#f6f6f6;"
                         f"padding:4px;margin:2px 0'>{shown}</pre></div>")
        decided = ""
        if case.get("fallback"):
            decided = " — <b style='color:#b00'>decided by the parser's fallback</b>"
        elif case.get("fallback") is False:
            decided = " — extracted from the response"
        mode = f" (mode {html.escape(str(case['mode']))})" if case.get("mode") else ""
        pred = case.get("prediction")
        parsed = _fmt(pred) if pred not in (None, "", []) else "<i>none</i> " + (EMPTY if empty else "(nothing extracted)")
        parts.append(f"<div><b>Parsed answer:</b> {parsed}{mode}{decided}"
                     + (" · <b>truncated at max_new_tokens</b>" if case.get("truncated") else "") + "</div>")
        if case.get("error"):
            parts.append(f"<div><b>Error:</b> {html.escape(str(case['error']))}</div>")
        return "".join(parts)


def keys_js() -> str:
    """:data:`KEYS_JS` with the keys it hands to the kernel."""
    import json

    return KEYS_JS % json.dumps(sorted([*KEY_CATEGORIES, "0", *KEY_MOVES]))


def key_help() -> str:
    """The keyboard map shown beside the keys box."""
    cats = " · ".join(f"<b>{k}</b> {html.escape(c)}" for k, c in KEY_CATEGORIES.items())
    return (f"<span style='font-size:90%'>keys, anywhere on the browser but in the note: {cats} (tag and go on) · "
            "<b>0</b> untag · <b>n</b> next · <b>p</b> previous · <b>f</b> first untagged</span>")


def distribution_html(tags) -> str:
    """The sample's category distribution as bars beside MMMU Fig. 6 and CMMMU Fig. 4: the live chart under
    the browser. Bars and shares are the hand tags only; the automatic suggestions of the cases not tagged by
    hand are counted in a column of their own, never as tags."""
    ours = errors.distribution(tags)
    table = errors.compare_published(ours, label="this sample")
    k = errors.counts(tags)
    rows = []
    for (_, r), (_, o) in zip(table.iterrows(), ours.iterrows()):
        c = r["category"]
        pubs = " · ".join(f"{name.split(' (')[0]} " + ("n/a" if r[name] != r[name] else f"{r[name]:.0f}%")
                          for name in errors.PUBLISHED)  # n/a: the paper has no such category
        rows.append(
            f"<tr data-category='{html.escape(c)}'><td>{html.escape(c)}</td>"
            f"<td style='width:220px'><div style='background:#c0392b;height:10px;width:{r['this sample'] * 2:.0f}px'></div></td>"
            f"<td class='mmb-count'>{int(o['n'])} by hand ({o['percent']:.0f}%)</td>"
            f"<td class='mmb-auto' style='color:#8a5a00'>{int(o['auto_n'])} suggested</td>"
            f"<td style='color:#555'>{pubs}</td></tr>")
    return (f"<div class='mmb-distribution-head'><b>Category distribution of this sample</b>: <b>{k['by_hand']}</b> of "
            f"{k['sampled']} tagged by hand (bars and % are those); {k['automatic']} untagged cases carry an automatic "
            f"suggestion, counted apart (not tags); updated at every tag</div>"
            "<table style='border-collapse:collapse;font-size:90%'>" + "".join(rows) + "</table>")


def error_browser(run_dir, n_sample: int = 30, stratify_by: str | None = None, seed: int = 0,
                  annotations_dir="annotations", run_id: str | None = None, annotator: str = "") -> ErrorBrowser:
    """Sample a run's errors (reusing ``<run>/error_sample.json``) and open the browser on them."""
    return ErrorBrowser(BrowserState.from_run(run_dir, n_sample, stratify_by, seed, annotations_dir, run_id, annotator))
