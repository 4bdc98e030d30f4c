// The product sheet's quickstart, word for word but for the URLs (this server serves den/ and
// pyodide/ at its root) and the report to the test. Bundled with foxden by esbuild.
import { idbStore, iframeRuntime, openDen } from "foxden-sandbox";

const den = await openDen({
  name: "notes",
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
console.log(run.result); // 30.0

const sh = await den.sh("grep north /drop/sales.csv");
console.log(sh.stdout); // north,10
await den.close();
window.quickstart = { result: run.result, stdout: sh.stdout, isolation: den.info.isolation };
