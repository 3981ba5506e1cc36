"""The HTML report's style sheet and script, inline in every report (nothing is fetched when
the file is opened: the page's Content-Security-Policy allows these two by their hashes and
nothing else).

The style: system fonts; light and dark schemes by `prefers-color-scheme`; one column that is
readable from 360 px to 1920 px wide (names and messages wrap anywhere, a picture, a table or
a traceback scrolls inside its own box, never the page); a visible focus ring.

The script only filters: the page shows every target and check without it (the controls are
`hidden` until the script shows them). Status check boxes and a search field, real inputs with
labels, so they work from the keyboard; a target stays shown while one of its checks (or, for
a target that could not be checked, its error) is; a search matches a target's or a check's
name, case-insensitively, and opens a closed target whose checks it found.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;
--failed:#c62828;--error:#a3122a;--passed:#1a7f37;--incomplete:#8a5a00;--skipped:#59636e;--focus:#0969da;
--s0:#7f0000;--s1:#c62828;--s2:#ef6c57;--s3:#f8b4a6;--ok:#dcefe0;--un:#e3e6ea;--none:transparent;--mark:#1f2328}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;
--panel:#161b22;--failed:#ff7b72;--error:#ffa198;--passed:#3fb950;--incomplete:#d29922;--skipped:#9198a1;
--focus:#4493f8;--s0:#ff3b30;--s1:#d2413a;--s2:#9c3a33;--s3:#5c302c;--ok:#1c3326;--un:#2d333b;--mark:#e6edf3}}
*{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif}
header,main,#controls{max-width:1280px;margin:0 auto;padding:0 12px}
h1{font-size:1.35rem;margin:16px 0 4px}
h2{font-size:1rem;margin:12px 0 4px}
code,pre,.name,.mono,svg text{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
.name,.message,.meta,li,p,dd,figcaption,summary{overflow-wrap:anywhere}
.summary{font-weight:600;margin:4px 0}
.env{margin:8px 0 12px}
.env dl{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,19rem),1fr));gap:2px 16px;margin:6px 0;
font-size:.85rem}
.env dl>div{display:flex;gap:8px;min-width:0}
.env dt{color:var(--muted);flex:0 0 auto}
.env dd{margin:0;min-width:0;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
#controls{background:var(--bg);border-bottom:1px solid var(--line);padding-top:8px;padding-bottom:8px}
@media (min-width:48rem) and (min-height:36rem){#controls{position:sticky;top:0;z-index:1}}
#controls fieldset{border:0;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 14px;align-items:center}
#controls legend{float:left;margin-right:8px;font-weight:600}
#controls label{white-space:nowrap}
.search{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;margin-top:6px}
.search input{font:inherit;min-width:0;flex:1 1 14rem;max-width:28rem;padding:4px 8px;border:1px solid var(--line);
border-radius:6px;background:var(--bg);color:var(--fg)}
button{font:inherit;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:var(--panel);
color:var(--fg);cursor:pointer}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
#shown{margin:0;color:var(--muted);font-size:.9rem}
.target{border:1px solid var(--line);border-left:6px solid var(--line);border-radius:6px;margin:10px 0;
background:var(--bg)}
.target.st-failed{border-left-color:var(--failed)}
.target.st-error{border-left-color:var(--error)}
.target.st-passed{border-left-color:var(--passed)}
.target.st-incomplete{border-left-color:var(--incomplete)}
.target>details>summary{padding:8px 10px;cursor:pointer;list-style-position:outside;margin-left:14px}
.target>details>div{padding:0 10px 10px}
.meta,.time{color:var(--muted);font-size:.85rem}
.badge{display:inline-block;font-size:.75rem;font-weight:700;letter-spacing:.03em;padding:0 6px;border-radius:4px;
border:1px solid currentColor;margin-right:6px}
.st-failed>.badge,.badge.st-failed{color:var(--failed)}
.badge.st-error{color:var(--error)}
.badge.st-passed{color:var(--passed)}
.badge.st-incomplete{color:var(--incomplete)}
.badge.st-skipped{color:var(--skipped)}
ol.checks{list-style:none;margin:0;padding:0}
.check{border-top:1px solid var(--line);padding:6px 0}
.message{margin:2px 0 0}
.reason{margin:6px 0;color:var(--error);font-weight:600}
.notes{margin:4px 0;padding-left:1.2rem;color:var(--incomplete)}
.explanation,.problems{margin:4px 0;padding-left:1.2rem}
pre{margin:6px 0;padding:8px;background:var(--panel);border:1px solid var(--line);border-radius:6px;
overflow:auto;max-height:32rem;font-size:.8rem;white-space:pre}
.scroll{overflow-x:auto;max-width:100%}
figure.where{margin:8px 0;padding:8px;border:1px solid var(--line);border-radius:6px;background:var(--panel)}
figure.where figcaption{font-size:.9rem;margin-bottom:4px}
svg{display:block}
svg text{font-size:12px;fill:var(--fg)}
svg .axis{fill:var(--muted)}
svg .mark{fill:var(--mark);font-size:13px;font-weight:700}
svg rect{stroke:var(--line);stroke-width:1}
.c-s0{fill:var(--s0)}.c-s1{fill:var(--s1)}.c-s2{fill:var(--s2)}.c-s3{fill:var(--s3)}
.c-ok{fill:var(--ok)}.c-un{fill:var(--un)}.c-none{fill:var(--none)}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;margin:6px 0;font-size:.85rem}
ul.legend li{display:flex;align-items:center;gap:4px}
svg.swatch{display:inline-block}
table{border-collapse:collapse;font-size:.8rem;margin:4px 0}
th,td{border:1px solid var(--line);padding:2px 8px;text-align:left}
td:last-child{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
details.numbers>summary,details.json>summary,details.trace>summary,details.others>summary{cursor:pointer;
font-size:.85rem;color:var(--muted)}
details.others{border-top:1px solid var(--line);padding-top:4px;margin-top:4px}
"""

SCRIPT = """
(function () {
  "use strict";
  var controls = document.getElementById("controls");
  var boxes = Array.prototype.slice.call(controls.querySelectorAll("input[name=status]"));
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  var targets = Array.prototype.slice.call(document.querySelectorAll("section.target"));
  function apply() {
    var on = {};
    boxes.forEach(function (box) { on[box.value] = box.checked; });
    var query = search.value.trim().toLowerCase();
    var count = 0;
    targets.forEach(function (target) {
      var named = !query || target.dataset.name.toLowerCase().indexOf(query) >= 0;
      var checks = target.querySelectorAll("li.check");
      var any = false;
      Array.prototype.forEach.call(checks, function (check) {
        var show = !!on[check.dataset.status] &&
          (named || check.dataset.name.toLowerCase().indexOf(query) >= 0);
        check.hidden = !show;
        any = any || show;
      });
      var own = named && !!on[target.dataset.status] &&
        (target.dataset.status === "error" || checks.length === 0);
      Array.prototype.forEach.call(target.querySelectorAll("details.others"), function (others) {
        var inside = others.querySelectorAll("li.check:not([hidden])").length > 0;
        others.hidden = !inside;
        if (query && inside) { others.open = true; }
      });
      target.hidden = !(any || own);
      if (!target.hidden) {
        count += 1;
        if (query && any) { target.querySelector("details").open = true; }
      }
    });
    shown.textContent = "Showing " + count + " of " + targets.length + " targets";
  }
  function only(statuses) {
    boxes.forEach(function (box) { box.checked = statuses === null || statuses.indexOf(box.value) >= 0; });
    apply();
  }
  boxes.forEach(function (box) { box.addEventListener("change", apply); });
  search.addEventListener("input", apply);
  document.getElementById("only-failures").addEventListener("click", function () { only(["failed", "error"]); });
  document.getElementById("show-all").addEventListener("click", function () { search.value = ""; only(null); });
  controls.hidden = false;
  apply();
})();
"""
