// The Space tab: one IndexedDB den named "space". Drop (or pick) a CSV, run the sample code,
// download /out/sums.csv. Python runs in foxden's sandbox page, which has no network.
import { openDen, iframeRuntime, idbStore } from "./foxden/api.js";

const $ = (id) => document.getElementById(id);
const status = (text) => ($("status").textContent = text);

/** The sample program. `path` (first line) is set to the CSV chosen last. */
export function sampleCode(path) {
  return `path = ${JSON.stringify(path)}

import csv, math

with open(path, newline="", encoding="utf-8-sig") as f:
    rows = list(csv.reader(f))
header, body = rows[0], [r for r in rows[1:] if any(cell.strip() for cell in r)]

def number(text):
    try:
        return int(text)
    except ValueError:
        return float(text)

sums = {}
for i, name in enumerate(header):
    cells = [r[i].strip() for r in body if i < len(r) and r[i].strip()]
    try:
        values = [number(c) for c in cells]
    except ValueError:
        continue  # not a numeric column
    if values:
        ints = all(isinstance(v, int) for v in values)
        sums[name] = sum(values) if ints else math.fsum(values)

with open("/out/sums.csv", "w", newline="") as f:
    out = csv.writer(f, lineterminator="\\n")
    out.writerow(["measure", "value"])
    out.writerow(["rows", len(body)])
    for name, total in sums.items():
        out.writerow([f"sum({name})", total])

print(f"{len(body)} rows; sums of {len(sums)} numeric column(s) written to /out/sums.csv")
print(open("/out/sums.csv").read(), end="")
`;
}

let den = null;
let currentCsv = null;
let codeEdited = false;

function setCsv(path) {
  currentCsv = path;
  const code = $("code");
  if (!codeEdited || !code.value) code.value = sampleCode(path);
  else code.value = code.value.replace(/^path = .*$/m, `path = ${JSON.stringify(path)}`);
  $("run").disabled = !den;
}

async function refreshFiles() {
  const files = await den.list();
  const list = $("files");
  list.replaceChildren();
  for (const f of files) {
    const li = document.createElement("li");
    li.textContent = `${f.path} (${f.size} bytes)`;
    if (f.path.startsWith("/drop/")) {
      const use = document.createElement("button");
      use.type = "button";
      use.textContent = "Use";
      use.setAttribute("aria-label", `Use ${f.path}`);
      use.addEventListener("click", () => setCsv(f.path));
      li.append(use);
    }
    list.append(li);
  }
  $("files-empty").hidden = files.length > 0;
  $("download").disabled = !files.some((f) => f.path === "/out/sums.csv");
  return files;
}

/** Saves a File into /drop/ and selects it. */
async function addFile(file) {
  if (!den) return;
  const safe = file.name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "") || "data.csv";
  const path = `/drop/${safe}`;
  await den.writeFile(path, new Uint8Array(await file.arrayBuffer()));
  setCsv(path);
  await refreshFiles();
  status(`Saved ${path}. Press Run.`);
}

async function run() {
  if (!den || !currentCsv) return;
  $("run").disabled = true;
  const out = $("output");
  out.textContent = "";
  status("Running…");
  const r = await den.run($("code").value, {
    timeoutMs: 30000,
    onOutput: (c) => out.append(c.text),
  });
  if (r.error) {
    out.append(r.error.traceback || `${r.error.type}: ${r.error.message}\n`);
    status(`Failed (${r.error.kind}).`);
  } else {
    status(`Done in ${Math.round(r.durationMs)} ms.`);
  }
  await refreshFiles();
  $("run").disabled = false;
  window.spaceLastRun = r;
}

async function download() {
  const bytes = await den.readFile("/out/sums.csv");
  const url = URL.createObjectURL(new Blob([bytes], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = "sums.csv";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function wireInput() {
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = e.dataTransfer && e.dataTransfer.files[0];
    if (file) addFile(file).catch(fail);
  });
  // Dropping outside the zone must not navigate the tab away to the file.
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => e.preventDefault());
  $("pick").addEventListener("change", (e) => {
    const file = e.target.files[0];
    if (file) addFile(file).catch(fail);
    e.target.value = "";
  });
  $("code").addEventListener("input", () => (codeEdited = true));
  $("run").addEventListener("click", () => run().catch(fail));
  $("download").addEventListener("click", () => download().catch(fail));
}

function fail(e) {
  status(`Error: ${e && e.message ? e.message : e}`);
  document.body.dataset.state = "error";
}

async function main() {
  wireInput();
  $("code").value = sampleCode("/drop/your-file.csv");
  const progress = $("progress");
  den = await openDen({
    name: "space",
    store: idbStore(),
    // auto: a manifest sandbox page where the browser supports it (Chromium, Firefox 154+);
    // in Firefox ESR 153 the den page reports an isolation failure and foxden falls back to a
    // sandboxed iframe of the same page.
    runtime: iframeRuntime({ denUrl: "foxden/den/den-ext.html", pyodideUrl: "foxden/pyodide/", isolation: "auto" }),
    onProgress: ({ loaded, total }) => {
      if (total > 0) progress.value = loaded / total;
    },
  });
  progress.hidden = true;
  window.spaceDen = den;
  const files = await refreshFiles();
  const csvs = files.filter((f) => f.path.startsWith("/drop/")).sort((a, b) => b.mtime - a.mtime);
  if (csvs.length) setCsv(csvs[0].path);
  status(`Python is ready (${den.info.isolation}, ${Math.round(den.info.loadMs)} ms). ${csvs.length ? "Press Run." : "Add a CSV file."}`);
  document.body.dataset.state = "ready";
}

main().catch(fail);
