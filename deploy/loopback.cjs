// Preloaded into the Netlify CLI (NODE_OPTIONS="--require deploy/loopback.cjs") for local checks:
// `netlify dev` listens on every network interface and has no option to choose the address, so a
// server started without an address is bound to 127.0.0.1 instead. Nothing else changes.
"use strict";

const net = require("net");

const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (args.length === 1 || typeof args[1] === "function") {
      args.splice(1, 0, "127.0.0.1");
    }
  } else if (first && typeof first === "object" && first.host === undefined && first.path === undefined &&
             first.port !== undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
