// The product sheet's quickstart against foxden/api (the API without <foxden-den>, from the
// smaller wasm module), bundled by esbuild. Reports to the test, with whether an element exists.
import { idbStore, iframeRuntime, openDen, runShell } from "foxden-sandbox/api";

const den = await openDen({
  name: "notes-api",
  store: idbStore(),
  runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/" }),
});
await den.writeFile("/drop/sales.csv", "region,amount\nnorth,10\nsouth,20\n");
const run = await den.run(
  `
import csv
rows = list(csv.DictReader(open("/drop/sales.csv")))
sum(float(row["amount"]) for row in rows)
`,
  { timeoutMs: 5000 },
);
const sh = await den.sh("grep north /drop/sales.csv");
const direct = runShell("wc -l /work/a", { "/work/a": "1\n2\n" }).stdout;
await den.close();
window.quickstart = {
  result: run.result,
  stdout: sh.stdout,
  direct,
  isolation: den.info.isolation,
  element: customElements.get("foxden-den") !== undefined,
};
