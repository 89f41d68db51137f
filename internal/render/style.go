package render

// Stylesheet is the one stylesheet of every page. The shared part comes
// first: the type, tables, verdict colours and charts every page draws
// alike; then what is a page's own, scoped by the class of its <body>, so
// that one page's class names cannot restyle another's.
const Stylesheet = `
:root { --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #ffffff; --panel: #f9fafb; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1240px; margin: 0 auto; padding: 20px 28px 48px; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.meta { color: var(--muted); margin: 2px 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; background: #e5e7eb; }
.badge.done { background: #dcfce7; color: #166534; }
.badge.interrupted, .badge.running { background: #fef9c3; color: #854d0e; }
.badge.failed { background: #fee2e2; color: #991b1b; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--panel); font-weight: 600; }
th.l, td.l { text-align: left; }
td.err, td.wrap { white-space: normal; text-align: left; max-width: 560px; }
td.faster { background: #dcfce7; color: #14532d; }
td.faster.strong { background: #86efac; }
td.slower { background: #fee2e2; color: #7f1d1d; }
td.slower.strong { background: #fca5a5; }
td.noise, td.same { background: #f1f5f9; color: #334155; }
td.inconclusive { background: #fefce8; color: #713f12; }
td small { color: var(--muted); }
td.nodata { color: var(--muted); font-style: italic; }
.error { color: #b00020; } .warning { color: #9a6700; } .notice { color: #555; }
.scroll { overflow-x: auto; max-width: 100%; }
.rule { color: #374151; background: var(--panel); border-left: 3px solid #94a3b8; padding: 8px 12px; max-width: 1000px; }
details { margin: 6px 0 10px; }
summary { cursor: pointer; color: #1d4ed8; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 14px; }
.charts.small { grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); }
.charts figure { margin: 0; padding: 6px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-family: inherit; fill: #374151; }
svg.chart .title { font-size: 14px; font-weight: 600; }
svg.chart .legend, svg.chart .tick { font-size: 11px; }
svg.chart .label { font-size: 11px; fill: #6b7280; }
svg.chart .nodata { font-size: 14px; fill: #9ca3af; }
svg.chart .grid { stroke: #eef0f3; }
svg.chart .axis { stroke: #9ca3af; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }

/* The report of a sweep or of runs, and the history. */
.finding { max-width: 1000px; }
.finding.drift { border-left: 3px solid #f59e0b; padding-left: 10px; }
p.plain { font-size: 15px; max-width: 1000px; margin: 14px 0 6px; padding: 10px 14px; background: #eff6ff; border-left: 3px solid #2563eb; }
.vars { columns: 2; column-gap: 28px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.vars div { break-inside: avoid; }
.peaks { margin: 4px 0 10px; }
.usl-refused { color: #713f12; background: #fefce8; padding: 6px 10px; max-width: 1000px; }

/* Pages of findings: tables read left to right and wrap. */
.verify th, .verify td, .check th, .check td, .readiness th, .readiness td { text-align: left; white-space: normal; vertical-align: top; }
.check table, .readiness table { width: 100%; }

/* verify */
.verify td.n { text-align: right; }
.verify .equal { color: #176b2c; font-weight: 600; } .verify .differ { color: #b3261e; font-weight: 600; }
.verify .verdict { padding: .6em 1em; border-radius: 4px; background: #f3f3f3; }
.verify ul.rules { color: #555; }

/* check */
.check .sev { font-weight: 600; text-transform: uppercase; font-size: .85em; white-space: nowrap; }
.check .fix { color: #333; font-size: .93em; }

/* replay */
.replay pre { white-space: pre-wrap; margin: 0; max-width: 70ch; font-size: 12px; }
.replay td, .replay th { vertical-align: top; }
.replay .diff { color: #b00; font-weight: 600; } .replay .warn { color: #a60; }
.replay .side { display: flex; gap: 16px; } .replay .side > div { flex: 1; min-width: 0; border: 1px solid var(--line); padding: 8px; }
.replay .ex { border-top: 2px solid #999; margin-top: 16px; padding-top: 8px; }

/* readiness */
.readiness .verdict { font-size: 1.6em; font-weight: 700; padding: .4em .7em; border-radius: 6px; display: inline-block; color: #fff; }
.readiness .verdict.ready { background: #1a7f37; } .readiness .verdict.ready-with-warnings { background: #9a6700; } .readiness .verdict.not-ready { background: #b00020; }
.readiness .status { font-weight: 600; text-transform: uppercase; font-size: .85em; }
.readiness .pass { color: #1a7f37; } .readiness .warn, .readiness .incomplete { color: #9a6700; } .readiness .fail, .readiness .blocking { color: #b00020; } .readiness .missing { color: #555; }
.readiness .cmd { background: #f6f8fa; padding: .2em .4em; border-radius: 4px; }
.readiness section { margin-top: 1.2em; }

/* vars bisect: a section of the report, or a page of its own. */
.vars-bisect code { font-size: 12px; }
`
