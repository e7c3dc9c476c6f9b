// Calls the counter package as a Node application does, through mysql2's
// promise API with prepared statements: every routine, a batch written by
// JSON.stringify, writes with ids, the refusals, and then the plain mode's
// statements, read from plain_statements.sql by their names, with the
// caller's steps around them that docs/plain-sql.md lists. Prints what it
// saw, one "what: value" line each, for the `languages` tests to compare
// with what the package documents. Run with mysql2 on NODE_PATH:
//   node counters_from_node.js PLAIN_STATEMENTS_SQL
// with HOST, PORT, USER, PASSWORD and DATABASE in its environment.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const mysql = require("mysql2/promise");

const PLAIN = "downloads";
const WIDE = "名前 😀";
const ESCAPED = "a&b<c>/d\"q\\";

function print(what, value) {
  console.log(`${what}: ${value}`);
}

/** How mysql2 reports a call the server refuses: the numbers, and its symbolic code. */
async function refused(what, attempt) {
  try {
    await attempt();
    print(what, "no error");
  } catch (error) {
    if (error.errno === undefined) throw error;
    // A bound's refusal says how much room was left.
    const room = /\(room left: (\d+)\)/.exec(error.message);
    print(what, `${error.errno} ${error.sqlState} ${error.code}${room ? ` room ${room[1]}` : ""}`);
  }
}

async function get(conn, name) {
  const [[row]] = await conn.execute("SELECT counter_get(?) AS total", [name]);
  return row.total;
}

async function routines(conn) {
  for (const name of [PLAIN, WIDE, ESCAPED]) {
    await conn.execute("CALL counter_setup(?, ?, ?, ?)", [name, "from Node", 4, null]);
  }
  for (let i = 0; i < 3; i++) {
    await conn.execute("CALL counter_increment(?)", [PLAIN]);
  }
  // Every JavaScript number goes as a double: 39 as 39.0, which counts.
  await conn.execute("CALL counter_add(?, ?)", [PLAIN, 39]);
  print("after adds", await get(conn, PLAIN));

  const batch = JSON.stringify({ [PLAIN]: 1, [WIDE]: 2, [ESCAPED]: 3 });
  print("batch", batch);
  await conn.execute("CALL counter_add_many(?)", [batch]);
  for (const name of [PLAIN, WIDE, ESCAPED]) {
    print(`after batch ${name}`, await get(conn, name));
  }

  // A write with an id, sent twice as after a lost answer: counted once.
  const id = crypto.randomBytes(16);
  for (let i = 0; i < 2; i++) {
    await conn.execute("CALL counter_add_once(?, ?, ?)", [id, PLAIN, 5]);
  }
  const batchId = crypto.randomBytes(16);
  for (let i = 0; i < 2; i++) {
    await conn.execute("CALL counter_add_many_once(?, ?)", [batchId, JSON.stringify({ [PLAIN]: 1, [WIDE]: 1 })]);
  }
  print("after writes with ids", `${await get(conn, PLAIN)} ${await get(conn, WIDE)}`);
  await conn.execute("CALL counter_forget_writes(?)", [3600]);

  const [[estimate]] = await conn.execute("SELECT counter_estimate(?) % 4 AS remainder", [PLAIN]);
  print("estimate is a multiple of 4", estimate.remainder);
  // A boolean goes as a TINYINT: the flag arrives as 1 or 0.
  await conn.execute("CALL counter_reset(?, ?, ?)", [WIDE, 10, false]);
  print("after reset", await get(conn, WIDE));
  await conn.execute("CALL counter_resize(?, ?)", [PLAIN, 8]);
  await conn.execute("CALL counter_compact(?)", [PLAIN]);
  print("after resize and compact", await get(conn, PLAIN));
  await conn.execute("CALL counter_delete(?)", [ESCAPED]);
  print("after delete", await get(conn, ESCAPED));

  await refused("unknown counter", () => conn.execute("CALL counter_increment(?)", ["missing"]));
  await refused("already exists", () => conn.execute("CALL counter_setup(?, ?, ?, ?)", [PLAIN, "again", null, null]));
  await refused("empty name", () => conn.execute("CALL counter_setup(?, ?, ?, ?)", ["", "d", null, null]));
  await refused("fractional delta", () => conn.execute("CALL counter_add(?, ?)", [PLAIN, 1.5]));
  await refused("fractional batch", () => conn.execute("CALL counter_add_many(?)", ['{"downloads": 1.5}']));
  await refused("short write id", () => conn.execute("CALL counter_add_once(?, ?, ?)", [Buffer.alloc(4), PLAIN, 1]));
  await refused("missing routine", () => conn.execute("CALL counter_missing(?)", [PLAIN]));
  await conn.execute("CALL counter_bound(?, ?, ?)", [PLAIN, 0, null]);
  await refused("past the floor", () => conn.execute("CALL counter_add(?, ?)", [PLAIN, -1000]));
  await conn.execute("CALL counter_bound(?, ?, ?)", [PLAIN, null, null]);
  print("after refusals", await get(conn, PLAIN));
}

/** The statements of plain_statements.sql by name: each statement's name
 * is the first word of the comment block above it ("setup (3 slots): ..."),
 * a block starting after a blank line (the file's header is one too). */
function plainStatements(path) {
  const text = fs.readFileSync(path, "utf8");
  const statements = {};
  let name = null;
  let blockStart = true;
  for (const line of text.split("\n")) {
    const named = /^-- ([a-z_]+)(?: \([^)]*\))?: /.exec(line);
    if (named && blockStart) {
      name = named[1];
    } else if (line !== "" && !line.startsWith("--") && name !== null) {
      statements[name] = line.replace(/;$/, "");
      name = null;
    }
    blockStart = line === "";
  }
  const bound = Number(/within (\d+) either way/.exec(text)[1]);
  return { statements, bound };
}

/** An error raised by the caller, with the number the routines raise. */
class Refusal extends Error {
  constructor(errno, message) {
    super(message);
    this.errno = errno;
    this.sqlState = "23000";
    this.code = "(raised by the caller)";
  }
}

/** The plain mode's calls, as docs/plain-sql.md describes them. */
class Plain {
  constructor(conn, path) {
    Object.assign(this, plainStatements(path));
    this.conn = conn;
  }

  async lastSlot(name) {
    const [rows] = await this.conn.execute(this.statements.last_slot, [name]);
    return rows.length === 0 ? null : Number(Object.values(rows[0])[0]);
  }

  async known(name) {
    const slots = await this.lastSlot(name);
    if (slots === null) throw new Refusal(9001, `unknown counter: '${name}'`);
    return slots;
  }

  /** setup with one row per slot: the reference's last group of
   * parameters repeated for each slot from 2. */
  async setup(name, description, slots, initial) {
    const sql = this.statements.setup;
    const first = sql.slice(0, sql.indexOf("), (") + 1);
    const other = sql.slice(sql.lastIndexOf(", ("));
    const params = [name, description, initial];
    for (let slot = 2; slot <= slots; slot++) params.push(name, slot, description);
    try {
      await this.conn.execute(first + other.repeat(slots - 1), params);
    } catch (error) {
      if (error.errno === 1062) throw new Refusal(9002, `counter already exists: '${name}'`);
      throw error;
    }
  }

  /** add_to_slot on a slot picked at random, then on slot 1; else, in a
   * transaction (the caller's, when `inTransaction`), through every slot.
   * mysql2 reports matched rows as affectedRows: for a delta other than 0,
   * the same. */
  async add(name, delta, inTransaction = false) {
    const slots = await this.known(name);
    for (const slot of [crypto.randomInt(1, slots + 1), 1]) {
      if ((await this.addToSlot(name, slot, delta, slots)) === 1) return;
    }
    const throughAll = () => this.addThroughAll(name, delta);
    await (inTransaction ? throughAll() : this.atomically(throughAll));
  }

  async addToSlot(name, slot, delta, slots) {
    const lowest = delta < 0 ? -this.bound - delta : "-9223372036854775808";
    const highest = delta > 0 ? this.bound - delta : "9223372036854775807";
    const params = [delta, name, slot, lowest, highest, delta, slots - 1, delta, 1 - slots];
    const [result] = await this.conn.execute(this.statements.add_to_slot, params);
    return result.affectedRows;
  }

  async atomically(body) {
    await this.conn.query("START TRANSACTION");
    try {
      await body();
      await this.conn.query("COMMIT");
    } catch (error) {
      await this.conn.query("ROLLBACK");
      throw error;
    }
  }

  /** lock_counter's row: count, lowest slot, total, floor, ceiling. */
  async lock(name) {
    const [[row]] = await this.conn.execute(this.statements.lock_counter, [name]);
    const [count, lowest, total, floor, ceiling] = Object.values(row).map((v) => (v === null ? null : BigInt(v)));
    if (count === 0n) throw new Refusal(9001, `unknown counter: '${name}'`);
    return { count, lowest, total, floor, ceiling };
  }

  /** Inside a transaction: a bounded counter's check and spread, or slot 1. */
  async addThroughAll(name, delta) {
    const locked = await this.lock(name);
    if (locked.floor === null && locked.ceiling === null) {
      if ((await this.addToSlot(name, 1, delta, Number(locked.count))) === 1) return;
      throw new Refusal(9003, `a slot would pass ${this.bound} either way, for counter: '${name}'`);
    }
    const value = locked.total + BigInt(delta);
    if (locked.floor !== null && value < locked.floor) {
      const room = locked.total - locked.floor;
      throw new Refusal(9004, `the write would pass the floor ${locked.floor} (room left: ${room}), for counter: '${name}'`);
    }
    if (locked.ceiling !== null && value > locked.ceiling) {
      const room = locked.ceiling - locked.total;
      throw new Refusal(9004, `the write would pass the ceiling ${locked.ceiling} (room left: ${room}), for counter: '${name}'`);
    }
    await this.spread(name, locked.count, value, locked.floor, locked.ceiling);
  }

  /** spread: value over the slots, each with an even share of the room. */
  async spread(name, slots, value, floor, ceiling) {
    const split = (amount) => {
      if (amount === null) return [null, null];
      let share = amount / slots;
      if (amount % slots !== 0n && amount < 0n) share -= 1n;
      return [String(share), String(amount - share * slots)];
    };
    const share = split(value);
    const floorRoom = split(floor === null ? null : value - floor);
    const ceilingRoom = split(ceiling === null ? null : ceiling - value);
    const params = [...share, ...share, ...floorRoom, ...share, ...ceilingRoom, false, name];
    await this.conn.execute(this.statements.spread, params);
  }

  /** bound: the total checked, then spread with the bounds' shares. */
  async setBounds(name, floor, ceiling) {
    await this.atomically(async () => {
      const locked = await this.lock(name);
      const [low, high] = [floor, ceiling].map((limit) => (limit === null ? null : BigInt(limit)));
      if ((low !== null && locked.total < low) || (high !== null && locked.total > high)) {
        throw new Refusal(9003, `the total is outside the bounds, for counter: '${name}'`);
      }
      await this.spread(name, locked.count, locked.total, low, high);
    });
  }

  /** A write with an id: record_write first in the write's transaction; a
   * 1062 there means this counter's part committed before. */
  async addOnce(id, name, delta) {
    await this.conn.query("START TRANSACTION");
    try {
      await this.conn.execute(this.statements.record_write, [name, id]);
      await this.add(name, delta, true);
      await this.conn.query("COMMIT");
    } catch (error) {
      await this.conn.query("ROLLBACK");
      if (error.errno !== 1062) throw error;
    }
  }

  async reset(name, value) {
    await this.conn.execute(this.statements.reset, [1, value, false, name]);
    await this.known(name);
  }

  async getMany(names) {
    const part = this.statements.get_many.split(" UNION ALL ")[0];
    const sql = names.map(() => part).join(" UNION ALL ");
    const [rows] = await this.conn.execute(sql, names.flatMap((name, position) => [position, name]));
    return rows.sort((a, b) => Number(a.position) - Number(b.position)).map((row) => row.total);
  }

  async delete(name) {
    await this.conn.query("START TRANSACTION");
    const [[lock]] = await this.conn.execute(this.statements.lock_counter, [name]);
    if (Number(Object.values(lock)[0]) === 0) {
      await this.conn.query("ROLLBACK");
      throw new Refusal(9001, `unknown counter: '${name}'`);
    }
    await this.conn.execute(this.statements.delete, [name]);
    await this.conn.query("COMMIT");
  }
}

async function plainMode(conn, path) {
  const plain = new Plain(conn, path);
  await plain.setup("plain", "from Node's plain mode", 4, 7);
  await plain.setup("plain 😀", "from Node's plain mode", 1, 0);
  for (let i = 0; i < 3; i++) await plain.add("plain", 1);
  await plain.add("plain", -2);
  await plain.add("plain 😀", 5);
  const id = crypto.randomBytes(16);
  for (let i = 0; i < 2; i++) await plain.addOnce(id, "plain", 10);
  print("plain get_many", (await plain.getMany(["plain", "missing", "plain 😀"])).map(String).join(" "));
  print("plain slots", await plain.lastSlot("plain"));
  await plain.reset("plain 😀", 3);
  print("plain after reset", await get(conn, "plain 😀"));
  await refused("plain unknown counter", () => plain.add("missing", 1));
  await refused("plain already exists", () => plain.setup("plain", "again", 2, 0));
  await refused("plain past the bound", () => plain.add("plain 😀", plain.bound));
  await plain.setup("stock", "from Node's plain mode", 4, 10);
  await plain.setBounds("stock", 0, null);
  await plain.add("stock", -3);
  await refused("plain past the floor", () => plain.add("stock", -8));
  await plain.add("stock", -7);
  print("plain stock sold out", (await plain.getMany(["stock"])).map(String).join(" "));
  await plain.delete("plain 😀");
  await refused("plain delete of a deleted counter", () => plain.delete("plain 😀"));
  print("plain after refusals", (await plain.getMany(["plain", "plain 😀"])).map(String).join(" "));
}

async function main() {
  const conn = await mysql.createConnection({
    host: process.env.HOST,
    port: Number(process.env.PORT),
    user: process.env.USER,
    password: process.env.PASSWORD,
    database: process.env.DATABASE,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  try {
    await routines(conn);
    await plainMode(conn, process.argv[2]);
  } finally {
    await conn.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
