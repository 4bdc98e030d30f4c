// A Preact app that uses <foxden-den> like any other element: it sets attributes through
// props, calls its methods through a ref, and listens to its DOM events. Nothing else.
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { liveCounts } from "/foxden.js";

window.foxdenCounts = liveCounts;

const CODE = `import time
for i in range(3):
    print(f"tick {i}", flush=True)
    time.sleep(0.05)
"done"`;

function App() {
  const [name, setName] = useState("preact-den");
  const [mounted, setMounted] = useState(true);
  const [state, setState] = useState("loading");
  const [text, setText] = useState("");
  const [result, setResult] = useState("");
  const den = useRef(null);

  useEffect(() => {
    const el = den.current;
    if (!el) return undefined;
    const onReady = () => setState("ready");
    const onOutput = (e) => setText((t) => t + e.detail.text);
    const onError = (e) => setState(`error: ${e.detail.error.message}`);
    el.addEventListener("ready", onReady);
    el.addEventListener("output", onOutput);
    el.addEventListener("error", onError);
    return () => {
      el.removeEventListener("ready", onReady);
      el.removeEventListener("output", onOutput);
      el.removeEventListener("error", onError);
    };
  }, [mounted]);

  async function run() {
    setText("");
    setState("running");
    const r = await den.current.run(CODE);
    setResult(r.result);
    setState("done");
  }

  const lines = text.split("\n").filter(Boolean);
  return (
    <main>
      <button id="run" type="button" onClick={run} disabled={state !== "ready"}>Run</button>
      <button id="rename" type="button" onClick={() => { setState("loading"); setName("preact-den-2"); }}>Rename</button>
      <button id="unmount" type="button" onClick={() => setMounted(false)}>Unmount</button>
      {mounted && <foxden-den ref={den} name={name} timeout="9000" />}
      <ol id="log" data-state={state}>
        {lines.map((l) => <li key={l}>out: {l}</li>)}
      </ol>
      <output id="result">{result}</output>
    </main>
  );
}

render(<App />, document.getElementById("app"));
