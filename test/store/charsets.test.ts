// Which characters a MySQL/MariaDB character set holds (src/store/charsets.ts), held to the server's own
// conversion: every character of the Basic Multilingual Plane and a few beyond it, converted to the set
// and back, comes back as it was exactly when charsetHolds says the set holds it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { MYSQL_URL, answers, IN_CI } from '../helpers/dialects.ts';
import { charsetHolds } from '../../src/store/charsets.ts';

const problem = await answers('mysql');
if (problem !== undefined && IN_CI) throw new Error(`CI=true but MariaDB does not answer: ${problem}`);

/** Every code point but the surrogates, up to U+FFFF, and some beyond. */
const CHARACTERS = [
  ...Array.from({ length: 0x10000 }, (_, cp) => cp).filter((cp) => cp < 0xd800 || cp > 0xdfff),
  0x10000,
  0x1f600,
  0x20000,
  0x10ffff,
].map((cp) => String.fromCodePoint(cp));

describe('character sets, held to the server', { skip: problem && `MariaDB: ${problem}` }, () => {
  for (const charset of ['latin1', 'ascii', 'utf8mb3', 'utf8mb4'])
    it(`${charset}: charsetHolds says of each character whether it comes back from the set as it was`, async (t) => {
      const connection = await createConnection({ uri: MYSQL_URL, charset: 'utf8mb4' });
      t.after(() => connection.end());
      // Not strict: a character the set lacks becomes '?' instead of failing the statement.
      await connection.query("SET SESSION sql_mode = ''");
      const text = CHARACTERS.join('');
      const [[row]] = await connection.query<RowDataPacket[]>(
        `SELECT CONVERT(CONVERT(? USING ${charset}) USING utf8mb4) AS back`,
        [text],
      );
      const back = Array.from(row!.back as string);
      assert.equal(back.length, CHARACTERS.length);
      const holds = charsetHolds(charset);
      const wrong = CHARACTERS.filter((c, i) => (back[i] === c) !== holds(c)).map(
        (c) => `U+${c.codePointAt(0)!.toString(16)}`,
      );
      assert.deepEqual(wrong, []);
      assert.equal(holds(text), charset === 'utf8mb4');
    });

  it('holds no lone surrogate, and takes an unknown set to hold ASCII only', () => {
    assert.equal(charsetHolds('utf8mb4')('a\ud800'), false);
    assert.equal(charsetHolds('cp1251')('abc'), true);
    assert.equal(charsetHolds('cp1251')('абв'), false);
  });
});
