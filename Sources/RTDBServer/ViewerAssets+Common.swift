extension ViewerAssets {
    /// `common.js`: what the tabs share, as `Rtdb`: the namespace, REST addresses and
    /// requests as the owner, the database's key order, data as the database holds it, JSON
    /// mistakes with their position, highlights.
    static let common = #"""
    "use strict";
    window.Rtdb = (function () {
      const params = new URLSearchParams(location.search);
      const namespace = params.get("ns") || hostNamespace(location.hostname);
      const status = document.getElementById("status");

      // The namespace a host names, as the server reads it: NAME.localhost or the first label
      // of a longer name; "default" for an address or a plain name.
      function hostNamespace(host) {
        const labels = host.toLowerCase().split(".");
        const address = /^[0-9.]+$/.test(host) || host.startsWith("[") || host.includes(":");
        if (address || !(labels.length >= 3 || (labels.length === 2 && labels[1] === "localhost"))) return "default";
        return labels[0];
      }

      function say(text, error) {
        status.textContent = text;
        status.className = error ? "error" : "";
      }

      // The REST address of a path (an array of keys), as the owner, with `extra` parameters.
      function restAddress(path, extra) {
        const encoded = path.map(encodeURIComponent).join("/");
        return target("/" + encoded + ".json", extra);
      }

      // A server address (`/.settings/rules.json`) for this namespace, as the owner.
      function target(address, extra) {
        return address + "?" + new URLSearchParams(Object.assign({ ns: namespace, auth: "owner" }, extra)).toString();
      }

      // Sends `body` (text or a Blob) with `method` to `address`; the answer as
      // {ok, status, text, etag, error}, error being the server's words (or why it could not
      // be reached).
      async function send(method, address, body, headers) {
        try {
          const response = await fetch(address, { method: method, body: body, headers: Object.assign({ "Content-Type": "application/json" }, headers) });
          return answered(response, await response.text());
        } catch (failure) {
          return unreachable;
        }
      }

      const unreachable = { ok: false, status: 0, text: "", etag: null, error: "the server cannot be reached" };

      // A response and its body `text` as `send` answers.
      function answered(response, text) {
        const error = response.ok ? null : refusal(response.status, text);
        return { ok: response.ok, status: response.status, text: text, etag: response.headers.get("ETag"), error: error };
      }

      // What a refused request's answer (`status`, body `text`) says: the server's words.
      function refusal(status, text) {
        try {
          const error = JSON.parse(text).error;
          if (typeof error === "string") return error;
        } catch (ignored) { }
        return "the server answered " + status;
      }

      // Reads `address` as `send` does, giving up past `limit` bytes ({tooBig: true}): a
      // value too big to show is not fetched whole to find that out.
      async function readCapped(address, limit, headers) {
        const stop = new AbortController();
        try {
          const response = await fetch(address, { headers: headers, signal: stop.signal });
          if (!response.ok) return answered(response, await response.text());
          const reader = response.body.getReader();
          const chunks = [];
          let size = 0;
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            size += value.length;
            if (size > limit) { stop.abort(); return { ok: false, tooBig: true, error: "more than " + sizeText(limit) }; }
            chunks.push(value);
          }
          return answered(response, await new Blob(chunks).text());
        } catch (failure) {
          return unreachable;
        }
      }

      // Writes `body` (JSON text) at `path` with `method`; the server's refusal, or null.
      async function write(method, path, body) {
        const answer = await send(method, restAddress(path, {}), body);
        return answer.ok ? null : answer.error;
      }

      // The database's key order: keys that are 32-bit integers (leading zeros allowed) first,
      // by value, the shorter first when equal; then the rest by their UTF-16 code units.
      function integer(key) {
        if (!/^-?[0-9]+$/.test(key)) return null;
        const digits = key.replace(/^-/, "").replace(/^0+/, "");
        if (digits.length > 10) return null;
        const value = Number(key);
        return value >= -2147483648 && value <= 2147483647 ? value : null;
      }
      function compareKeys(a, b) {
        const ai = integer(a), bi = integer(b);
        if (ai !== null && bi !== null) {
          if (ai !== bi) return ai - bi;
          if (a.length !== b.length) return a.length - b.length;
        } else if (ai !== null) {
          return -1;
        } else if (bi !== null) {
          return 1;
        }
        return a < b ? -1 : a > b ? 1 : 0;
      }

      // What the database refuses in a key.
      function keyProblem(key) {
        if (key.length === 0) return "a key cannot be empty";
        if (/[.$#\[\]\/\u0000-\u001f\u007f]/.test(key)) return "a key may not contain . $ # [ ] / or a control character";
        if (new TextEncoder().encode(key).length > 768) return "a key is at most 768 bytes";
        return null;
      }

      function isObject(value) { return value !== null && typeof value === "object"; }

      // An object's number of children, also when a listen cut it to `{".count": N}` (keys
      // cannot hold a ".", so no data looks like that).
      function childCount(value) {
        if (!isObject(value)) return 0;
        const keys = Object.keys(value);
        return keys.length === 1 && keys[0] === ".count" ? value[".count"] : keys.length;
      }

      // An object for data: without a prototype, so a key such as __proto__ or constructor is
      // a child like any other.
      function dataObject() { return Object.create(null); }

      // Data as the database holds it: a list the server wrote as an array is an object of its
      // indexes, without the nulls that stand for indexes it does not have. Priorities
      // (`.priority`, `.value`) are kept only when `priorities` says so.
      function normalized(value, priorities) {
        if (!isObject(value)) return value;
        if (!priorities && ".value" in value) return value[".value"];
        const object = dataObject();
        for (const [key, child] of Object.entries(value)) {
          if (child !== null && (priorities || key !== ".priority")) object[key] = normalized(child, priorities);
        }
        return Object.keys(object).length ? object : null;
      }

      // The value at `parts` below `value`, set to `data` (null removes).
      function setAt(value, parts, data) {
        if (parts.length === 0) return data;
        const copy = isObject(value) ? Object.assign(dataObject(), value) : dataObject();
        const [first, ...rest] = parts;
        const child = setAt(copy[first], rest, data);
        if (child === null || child === undefined) delete copy[first]; else copy[first] = child;
        return Object.keys(copy).length ? copy : null;
      }

      // A stream's value after one `put` or `patch` event's message.
      function applyEvent(value, kind, message, priorities) {
        const parts = splitPath(message.path);
        if (kind === "put") return setAt(value, parts, normalized(message.data, priorities));
        for (const [relative, data] of Object.entries(message.data || {})) {
          value = setAt(value, parts.concat(splitPath(relative)), normalized(data, priorities));
        }
        return value;
      }

      function splitPath(text) { return text.split("/").filter((part) => part.length > 0); }
      function pathText(path) { return "/" + path.join("/"); }

      // Two values alike, whatever the order of their members.
      function same(a, b) {
        if (!isObject(a) || !isObject(b)) return a === b;
        const keys = Object.keys(a);
        if (keys.length !== Object.keys(b).length) return false;
        return keys.every((key) => key in b && same(a[key], b[key]));
      }

      // The first mistake in JSON `text`: {offset, line, column, message}; null for none.
      // The browser's own parser says less, and not always where.
      function jsonMistake(text) {
        let i = 0;
        const fail = (message) => { throw { offset: i, message: message }; };
        const space = () => { while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++; };
        function string() {
          i++;
          for (;;) {
            if (i >= text.length) fail("the string is not closed");
            const code = text.charCodeAt(i);
            if (code === 34) { i++; return; }
            if (code < 32) fail("a control character in a string must be escaped, as \\n");
            if (code !== 92) { i++; continue; }
            const escape = text[i + 1];
            if (escape === "u") {
              if (!/^[0-9a-fA-F]{4}$/.test(text.substr(i + 2, 4))) fail("\\u takes four hexadecimal digits");
              i += 6;
            } else if (escape !== undefined && "\"\\/bfnrt".includes(escape)) {
              i += 2;
            } else {
              fail("not an escape: use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
            }
          }
        }
        function value(depth) {
          if (depth > 1000) fail("nested more than 1000 deep");
          space();
          if (i >= text.length) fail("a value is missing");
          const c = text[i];
          if (c === "{" || c === "[") {
            const close = c === "{" ? "}" : "]";
            i++;
            space();
            if (text[i] === close) { i++; return; }
            for (;;) {
              space();
              if (c === "{") {
                if (text[i] !== "\"") fail("expected a key in double quotes");
                string();
                space();
                if (text[i] !== ":") fail("expected ':' after the key");
                i++;
              }
              value(depth + 1);
              space();
              if (text[i] === ",") { i++; continue; }
              if (text[i] === close) { i++; return; }
              fail("expected ',' or '" + close + "'");
            }
          }
          if (c === "\"") return string();
          for (const word of ["true", "false", "null"]) {
            if (text.startsWith(word, i)) { i += word.length; return; }
          }
          const number = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 1000));
          if (!number) fail(c === "'" ? "strings take double quotes" : "expected a value: an object, array, string, number, true, false or null");
          i += number[0].length;
        }
        try {
          value(0);
          space();
          if (i < text.length) fail("more text after the value");
          return null;
        } catch (mistake) {
          if (!isObject(mistake) || !("offset" in mistake)) throw mistake;
          const before = text.slice(0, mistake.offset);
          const line = before.split("\n").length;
          return { offset: mistake.offset, line: line, column: mistake.offset - before.lastIndexOf("\n"), message: mistake.message };
        }
      }

      // JSON text with every character past ASCII escaped (`\u00e9`): what an HTTP header
      // carries intact.
      function asciiJSON(value) {
        return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
      }

      // Shows `mistake` in `problem` and selects where it is in `field` (an input or textarea).
      function showMistake(field, problem, mistake) {
        const where = field.tagName === "TEXTAREA" ? "line " + mistake.line + ", column " + mistake.column : "column " + mistake.column;
        problem.textContent = " " + where + ": " + mistake.message;
        field.focus();
        field.setSelectionRange(mistake.offset, Math.min(mistake.offset + 1, field.value.length));
      }

      function leaf(value) {
        const span = document.createElement("span");
        span.className = typeof value;
        span.textContent = typeof value === "string" ? JSON.stringify(value) : String(value);
        return span;
      }

      function flash(element, kind) {
        element.classList.remove("added", "changed");
        element.classList.add(kind);
        setTimeout(() => element.classList.remove(kind), 1500);
      }

      function element(tag, className, text) {
        const made = document.createElement(tag);
        if (className) made.className = className;
        if (text !== undefined) made.textContent = text;
        return made;
      }

      // A size in words: 512 bytes, 3.4 KB, 12.5 MB.
      function sizeText(bytes) {
        if (bytes < 1024) return bytes + (bytes === 1 ? " byte" : " bytes");
        if (bytes < 1048576) return (bytes / 1024).toFixed(1) + " KB";
        return (bytes / 1048576).toFixed(1) + " MB";
      }

      return {
        namespace, say, restAddress, target, send, write, compareKeys, keyProblem, isObject, childCount, dataObject, asciiJSON,
        applyEvent, splitPath, pathText, same, jsonMistake, showMistake, leaf, flash, element, size: sizeText, readCapped, refusal,
      };
    })();
    """#
}
