// The vendor scenario: a Node.js program that loads onnxruntime-node, creates two
// CPU inference sessions, runs one, and calls process.exit() while both sessions
// are still alive (as a CLI tool or a test runner does when its work is done).
// process.exit() runs no finalizers: the sessions are never released, and what
// onnxruntime-node keeps in statics is destroyed by the loader's shutdown.
//
//   node.exe app.js MODEL [EP [KEY=VALUE...]]
//     EP: cpu (default), webgpu, webgpu:Vulkan (Dawn's Vulkan backend), dml;
//     KEY=VALUE: session config entries (SessionOptions.extra)
const ort = require('onnxruntime-node');

const model = process.argv[2];
const ep = process.argv[3] || 'cpu';
const [epName, backend] = ep.split(':');
const provider = backend ? { name: epName, dawnBackendType: backend } : epName;
const extra = {};
for (const kv of process.argv.slice(4)) {
  const at = kv.indexOf('=');
  extra[kv.slice(0, at)] = kv.slice(at + 1);
}

(async () => {
  const sessions = [];
  for (let i = 0; i < 2; i++) {
    sessions.push(await ort.InferenceSession.create(model, { executionProviders: [provider], extra }));
  }
  const x = new ort.Tensor('float32', new Float32Array(4 * 64).fill(0.5), [4, 64]);
  const out = await sessions[0].run({ x });
  console.log(`ran ${ep}: y ${out.y.dims.join('x')}, ${sessions.length} sessions alive, exiting`);
  process.exit(0);
})().catch((e) => {
  console.log(`error (${ep}): ${(e && e.stack) || e}`);
  process.exit(3);
});
