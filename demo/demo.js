// The demo's page glue: the sandbox is the <foxden-den> element; this only wires two buttons
// to its methods and events.
import "/foxden.js";

const den = document.getElementById("den");
const download = document.getElementById("download");
const sample = document.getElementById("sample");

const SAMPLE = "region,units,amount\nnorth,3,10.5\nsouth,4,20\neast,,7.25\n";

den.addEventListener("ready", (e) => {
  sample.disabled = false;
  document.getElementById("isolation").textContent = `Sandbox: ${e.detail.info.isolation}`;
});

// The download button follows /out/sums.csv: enabled once a run wrote it.
den.addEventListener("file-change", async () => {
  const files = await den.list();
  download.disabled = !files.some((f) => f.path === "/out/sums.csv");
});

download.addEventListener("click", async () => {
  const bytes = await den.readFile("/out/sums.csv");
  const url = URL.createObjectURL(new Blob([bytes], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = "sums.csv";
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
});

sample.addEventListener("click", () => den.writeFile("/drop/sample.csv", SAMPLE));
