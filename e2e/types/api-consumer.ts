// A user's program against foxden/api's types (dist/api.d.ts): the same API as foxden's,
// without the element. Type-checked on its own (tsconfig.api.json here). Not run.
import {
  DenError,
  decodeSnapshot,
  encodeSnapshot,
  iframeRuntime,
  memoryStore,
  openDen,
  runShell,
  type Den,
  type RunResult,
} from "foxden-sandbox/api";

const den: Den = await openDen({ name: "api", store: memoryStore(), runtime: iframeRuntime() });
await den.writeFile("/work/a.txt", "hi\n");
const run: RunResult = await den.run("open('/work/a.txt').read()");
const text: string | null = run.result;
const shell = runShell("cat /work/a.txt", { "/work/a.txt": "hi\n" });
const code: number = shell.code;
const files: Record<string, Uint8Array> = decodeSnapshot(encodeSnapshot({ "/work/a.txt": "hi\n" }));
try {
  await den.close();
} catch (e) {
  if (e instanceof DenError) console.log(e.code, text, code, files);
}
// @ts-expect-error foxden/api has no element, and declares none.
import type { FoxdenDenElement } from "foxden-sandbox/api";
// Without foxden.d.ts in the program, the tag name is an ordinary element.
const plain = document.querySelector("foxden-den");
// @ts-expect-error the element's methods are not declared.
plain?.run("1");
