extension ViewerAssets {
    /// `import.js`: a JSON file written at a path, as the shell's `import` writes it. A file
    /// up to 8 MB is one atomic write. A larger one (an object or a list) is cut between its
    /// top-level children into writes of about 2 MB: the whole file is read and checked
    /// first, so a mistake (with its line and column) writes nothing; then the parts go out
    /// one after another, the first replacing the path (unless merging), with progress.
    static let importer = #"""
    "use strict";
    Rtdb.importer = (function () {
      const R = Rtdb;
      const wholeLimit = 8 << 20;
      const partSize = 2 << 20;
      // The server's largest request body.
      const bodyLimit = 64 << 20;

      class Mistake extends Error {}

      function where(line, column) { return "line " + line + ", column " + column; }

      // The first non-space character of `text`.
      function opening(text) { const match = /\S/.exec(text); return match ? match[0] : ""; }

      // Reads `file` once, cutting it between top-level children: {top, parts} of about
      // `partSize` bytes each, each checked as JSON; null when the file's value is neither an
      // object nor a list. `report(done)` hears of the bytes read. Columns count characters
      // as the browser's text does (UTF-16 units), so they match what an editor shows.
      async function cut(file, report) {
        const parts = [];
        let top = null, depth = 0, inString = false, escaped = false;
        // `column`: the current byte's; a byte-order mark at the start is skipped.
        let offset = 0, line = 1, column = 0, skip = 0;
        let member = -1, memberLine = 1, memberColumn = 1, afterComma = false, closed = false;
        let part = null;
        const finishPart = async () => {
          if (!part) return;
          const open = top === 123 ? "{" : "[";
          const close = top === 123 ? "}" : "]";
          const text = await new Blob([open, file.slice(part.start, part.end), close]).text();
          try { JSON.parse(text); } catch (error) {
            const mistake = R.jsonMistake(text) || { offset: 1, line: 1, column: 1, message: error.message };
            const inside = text.slice(1, mistake.offset);
            const lines = inside.split("\n").length - 1;
            const column = lines ? mistake.offset - text.lastIndexOf("\n", mistake.offset - 1) : part.column + mistake.offset - 1;
            throw new Mistake(where(part.line + lines, column) + ": " + mistake.message);
          }
          parts.push(part);
          part = null;
        };
        const endMember = async (end) => {
          if (member < 0) throw new Mistake(where(line, column) + ": expected a value");
          // Room for the braces and a list item's index around it.
          if (end - member > bodyLimit - 32) {
            throw new Mistake("the child at " + where(memberLine, memberColumn) + " is " + R.size(end - member) +
                              ", more than one write carries (" + R.size(bodyLimit) + "): import it with the shell's import");
          }
          if (part && end - part.start > partSize) await finishPart();
          if (!part) part = { start: member, end: end, line: memberLine, column: memberColumn, members: [] };
          part.end = end;
          if (top === 91) part.members.push([member, end]);
          member = -1;
        };
        const reader = file.stream().getReader();
        for (;;) {
          const { value: chunk, done } = await reader.read();
          if (done) break;
          for (let k = 0; k < chunk.length; k++, offset++) {
            const b = chunk[k];
            if (offset === 0 && b === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) skip = 3;
            if (offset < skip) continue;
            // A character starts at each byte that does not continue one; one past U+FFFF is
            // two UTF-16 units.
            if (b === 10) { line++; column = 0; } else if ((b & 0xc0) !== 0x80) column += b >= 0xf0 ? 2 : 1;
            if (inString) {
              if (escaped) escaped = false; else if (b === 92) escaped = true; else if (b === 34) inString = false;
              continue;
            }
            if (b === 10 || b === 32 || b === 9 || b === 13) continue;
            if (closed) throw new Mistake(where(line, column) + ": more text after the value");
            if (depth === 0) {
              if (b !== 123 && b !== 91) return null;
              top = b;
              depth = 1;
              continue;
            }
            if (depth === 1 && member < 0 && b !== 44 && b !== 125 && b !== 93) {
              member = offset;
              memberLine = line;
              memberColumn = column;
            }
            if (b === 34) {
              inString = true;
            } else if (b === 123 || b === 91) {
              depth++;
            } else if (b === 125 || b === 93) {
              depth--;
              if (depth === 0 && b !== (top === 123 ? 125 : 93)) {
                throw new Mistake(where(line, column) + ": expected '" + (top === 123 ? "}" : "]") + "' to close the " + (top === 123 ? "object" : "list"));
              }
              if (depth === 0) {
                if (member >= 0 || afterComma) await endMember(offset);
                closed = true;
              }
            } else if (b === 44 && depth === 1) {
              await endMember(offset);
              afterComma = true;
              continue;
            }
            if (depth >= 1) afterComma = false;
          }
          report(offset);
        }
        if (!closed) throw new Mistake(where(line, column + 1) + ": the file ends before its value is closed");
        await finishPart();
        return { top: top, parts: parts };
      }

      // A part as the body of a write: an object's members as they are in the file; a list's
      // items under their indexes (the database holds a list as an object of them).
      function body(file, part, top, index) {
        if (top === 123) return { blob: new Blob(["{", file.slice(part.start, part.end), "}"]), next: index };
        const pieces = ["{"];
        part.members.forEach(([start, end], i) => {
          pieces.push((i ? "," : "") + JSON.stringify(String(index + i)) + ":", file.slice(start, end));
        });
        pieces.push("}");
        return { blob: new Blob(pieces), next: index + part.members.length };
      }

      // One write of `blob` (PUT, or PATCH when merging) at `path`; `progress(sent)` hears of
      // its bytes as they go. The server's refusal, or null.
      function send(method, path, blob, progress) {
        return new Promise((resolve) => {
          const request = new XMLHttpRequest();
          request.open(method, R.restAddress(path, { print: "silent" }));
          request.setRequestHeader("Content-Type", "application/json");
          request.upload.onprogress = (event) => progress(event.loaded);
          request.onload = () => resolve(request.status < 300 ? null : R.refusal(request.status, request.responseText));
          request.onerror = () => resolve("the server cannot be reached");
          request.send(blob);
        });
      }

      function seconds(ms) { return ms < 10000 ? (ms / 1000).toFixed(1) + " s" : Math.round(ms / 1000) + " s"; }

      // Imports `file` at `path`; `show(text, done, total)` hears of the progress. The result
      // is {summary} or {error}.
      async function run(file, path, merge, show) {
        const target = R.pathText(path);
        const started = Date.now();
        let plan;
        try {
          if (file.size <= wholeLimit) {
            const text = await file.text();
            const mistake = R.jsonMistake(text);
            if (mistake) throw new Mistake(where(mistake.line, mistake.column) + ": " + mistake.message);
            if (merge && opening(text) !== "{") throw new Mistake("a merge takes a JSON object: its children replace those of the same names");
            // The text as read: without a byte-order mark the server would refuse.
            plan = [{ method: merge ? "PATCH" : "PUT", blob: new Blob([text]) }];
          } else {
            show("checking " + file.name, 0, file.size);
            const cutting = await cut(file, (done) => show("checking: " + R.size(done) + " of " + R.size(file.size), done, file.size));
            if (cutting === null) {
              if (merge) throw new Mistake("a merge takes a JSON object: its children replace those of the same names");
              if (file.size > bodyLimit) throw new Mistake("the file's value is " + R.size(file.size) + ", more than one write carries (" + R.size(bodyLimit) + ")");
              const text = await file.text();
              const mistake = R.jsonMistake(text);
              if (mistake) throw new Mistake(where(mistake.line, mistake.column) + ": " + mistake.message);
              plan = [{ method: "PUT", blob: new Blob([text]) }];
            } else {
              if (merge && cutting.top !== 123) throw new Mistake("a merge takes a JSON object: its children replace those of the same names");
              let index = 0;
              plan = cutting.parts.map((part, i) => {
                const made = body(file, part, cutting.top, index);
                index = made.next;
                return { method: i === 0 && !merge ? "PUT" : "PATCH", blob: made.blob };
              });
              if (!plan.length) plan = [{ method: merge ? "PATCH" : "PUT", blob: new Blob(["{}"]) }];
            }
          }
        } catch (error) {
          if (error instanceof Mistake) return { error: file.name + ": " + error.message + "; nothing was written" };
          return { error: "cannot read " + file.name + ": " + error.message + "; nothing was written" };
        }
        const total = plan.reduce((sum, write) => sum + write.blob.size, 0);
        const writing = Date.now();
        let sent = 0;
        for (let i = 0; i < plan.length; i++) {
          const write = plan[i];
          const refusal = await send(write.method, path, write.blob, (loaded) => {
            const done = sent + loaded;
            const elapsed = Date.now() - writing;
            const rate = elapsed > 0 ? done / elapsed * 1000 : 0;
            const left = rate > 0 ? ", " + seconds((total - done) / rate * 1000) + " left" : "";
            const parts = plan.length > 1 ? " (write " + (i + 1) + " of " + plan.length + ")" : "";
            show("writing " + R.size(done) + " of " + R.size(total) + parts + ", " + R.size(rate) + "/s" + left, done, total);
          });
          if (refusal) {
            const held = i === 0 ? "nothing was written" : target + " holds the first " + i + " of " + plan.length + " parts: importing the file again finishes it";
            return { error: file.name + ": " + refusal + "; " + held };
          }
          sent += write.blob.size;
          show("writing " + R.size(sent) + " of " + R.size(total), sent, total);
        }
        const writes = plan.length === 1 ? "one write" : plan.length + " writes";
        return { summary: "imported " + file.name + " (" + R.size(file.size) + ") into " + target + " in " + writes + ", " + seconds(Date.now() - started) };
      }

      return { run };
    })();
    """#
}
