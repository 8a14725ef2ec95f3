// Entry point the extension host loads: runs every *.test.js here with mocha and prints a summary
// line ("N passed, N failed") that CI can read from the runner's output.
const path = require('path');
const fs = require('fs');
const Mocha = require('mocha');

exports.run = function run() {
  const mocha = new Mocha({ ui: 'tdd', timeout: 90000, color: false });
  for (const f of fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort()) { mocha.addFile(path.join(__dirname, f)); }
  return new Promise((resolve, reject) => {
    let passed = 0;
    const runner = mocha.run((failures) => {
      console.log(`mltriage-test: ${passed} passed, ${failures} failed`);
      if (failures) { reject(new Error(`${failures} tests failed`)); } else { resolve(); }
    });
    runner.on('pass', (t) => { passed += 1; console.log(`mltriage-test ✓ ${t.fullTitle()}`); });
    runner.on('fail', (t, err) => console.log(`mltriage-test ✗ ${t.fullTitle()}: ${err && err.stack || err}`));
  });
};
