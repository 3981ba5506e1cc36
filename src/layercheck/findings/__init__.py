"""What each check family found, typed for the reports, and its words.

A check records its finding as data in its result's details; `CheckResult` reads it back here,
strictly, wherever a result is made (the check's, a worker's, the cache's, a report file's),
and renders the failure's message (and the gradient check's explanation) from it: never a
sentence carried beside the data. One module per family: `gradient` (with its words in
`findings.gradient_wording`), `comparison`, `sizes`, `observations`, and `problems` (the families whose
failure is one problem with one value, through one codec). Below `results`; above `numerics`.
"""
