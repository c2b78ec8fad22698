extension ViewerAssets {
    /// `live.js`: one realtime connection (the WebSocket at `/.ws`, as the SDKs speak it),
    /// signed in as the owner, that carries every listen the Data tab holds: a browser keeps
    /// only six HTTP connections to a server, so a stream per open node would run out. Each
    /// listen has a tag; the server's data for it comes back under that tag. After a lost
    /// connection it connects again, waiting longer each time (up to 10 s), and listens again.
    static let live = #"""
    "use strict";
    Rtdb.live = (function () {
      const R = Rtdb;
      let socket = null;
      let ready = false;
      let nextRequest = 1;
      let nextTag = 1;
      let wait = 250;
      let keepAlive = null;
      // A message the server sent in several frames: the frames still to come and the text so far.
      let parts = null;
      const listens = new Map();
      const answers = new Map();

      function address() {
        return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/.ws?v=5&ns=" + encodeURIComponent(R.namespace);
      }

      function request(action, body, answer) {
        const id = nextRequest++;
        if (answer) answers.set(id, answer);
        socket.send(JSON.stringify({ t: "d", d: { r: id, a: action, b: body } }));
      }

      function pathWire(path) { return "/" + path.join("/"); }

      function sendListen(tag, listen) {
        request("q", { p: pathWire(listen.path), q: listen.query, t: tag, h: "" }, (answer) => {
          if (answer.s === "ok" || listens.get(tag) !== listen) return;
          // Refused: not asked again after a reconnection.
          listens.delete(tag);
          listen.handler.refused(typeof answer.d === "string" ? answer.d : answer.s);
        });
      }

      // A query's wire form with its keys in order, to compare two.
      function queryText(query) {
        if (!R.isObject(query)) return "{}";
        return JSON.stringify(Object.keys(query).sort().map((key) => [key, query[key]]));
      }

      function connect() {
        socket = new WebSocket(address());
        socket.onmessage = (event) => { if (typeof event.data === "string") receive(event.data); };
        socket.onclose = () => {
          ready = false;
          parts = null;
          answers.clear();
          clearInterval(keepAlive);
          R.say("reconnecting…", true);
          setTimeout(connect, wait);
          wait = Math.min(wait * 2, 10000);
        };
      }

      function receive(text) {
        if (parts) {
          parts.text += text;
          if (--parts.left > 0) return;
          text = parts.text;
          parts = null;
        } else if (/^[0-9]{1,6}$/.test(text)) {
          // The count of the frames that make the next message.
          parts = { left: Number(text), text: "" };
          return;
        }
        let message;
        try { message = JSON.parse(text); } catch (error) { return; }
        if (!R.isObject(message) || !R.isObject(message.d)) return;
        if (message.t === "c") return control(message.d);
        if (message.t !== "d") return;
        const data = message.d;
        if (typeof data.r === "number") {
          const answer = answers.get(data.r);
          answers.delete(data.r);
          if (answer) answer(R.isObject(data.b) ? data.b : {});
          return;
        }
        const body = R.isObject(data.b) ? data.b : {};
        if (data.a === "d" || data.a === "m") {
          const listen = listens.get(body.t);
          if (listen && typeof body.p === "string") listen.handler.data(data.a === "d" ? "put" : "patch", R.splitPath(body.p).slice(listen.path.length), body.d);
        } else if (data.a === "c") {
          // Revoked: {"p": path, "q": [query]}.
          const revoked = queryText(Array.isArray(body.q) ? body.q[0] : null);
          for (const [tag, listen] of listens) {
            if (pathWire(listen.path) === "/" + R.splitPath(String(body.p)).join("/") && queryText(listen.query) === revoked) {
              listens.delete(tag);
              listen.handler.refused("the rules no longer let the owner read this");
            }
          }
        } else if (data.a === "ac") {
          R.say("the owner's credential was revoked", true);
        }
      }

      function control(message) {
        if (message.t === "h") {
          // The server's hello: sign in as the owner, then listen (again) to everything open.
          request("auth", { cred: "owner" }, (answer) => {
            if (answer.s !== "ok") return R.say("the server refused the owner's credential: " + (answer.d || answer.s), true);
            ready = true;
            wait = 250;
            R.say("live");
            clearInterval(keepAlive);
            keepAlive = setInterval(() => { if (socket.readyState === WebSocket.OPEN) socket.send("0"); }, 45000);
            for (const [tag, listen] of listens) { listen.handler.again(); sendListen(tag, listen); }
          });
        } else if (message.t === "s") {
          R.say("the server is stopping: " + message.d, true);
        } else if (message.t === "e") {
          R.say("the server said: " + message.d, true);
        }
      }

      return {
        // Listens at `path` with `query` (its wire form); `handler` hears data(kind, relative
        // path, data), refused(why) and again() (before it is sent anew after a reconnection).
        // The tag returned ends it.
        listen(path, query, handler) {
          const tag = nextTag++;
          const listen = { path: path, query: query, handler: handler };
          listens.set(tag, listen);
          if (ready) sendListen(tag, listen);
          return tag;
        },
        unlisten(tag) {
          const listen = listens.get(tag);
          if (!listen) return;
          listens.delete(tag);
          if (ready) request("n", { p: pathWire(listen.path), q: listen.query, t: tag });
        },
        start() {
          R.say("connecting…");
          connect();
        },
      };
    })();
    """#
}
