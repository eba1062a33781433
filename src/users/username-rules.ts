// Which new usernames are allowed: the one rule of `tokend user create`, `tokend import-ripple` and
// `tokend import`. Kept apart from username.ts (how names compare, which the server loads): the script
// tables here are built when a command that makes users loads this module, never in `tokend serve`.
import { usernameSafe } from './username.ts';

export const MAX_USERNAME_LENGTH = 255;

// Control characters, format characters (zero-width spaces and joiners, direction marks), line and
// paragraph separators, the ideographic space, every default-ignorable code point (fillers, the combining
// grapheme joiner, Khmer and Mongolian invisible vowels and selectors, tags) and every variation selector:
// they make one name look like another, or like none. Checked before and after NFKC.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u3000\p{Default_Ignorable_Code_Point}\p{Variation_Selector}]/u;

// What a driver decoding bytes that are not UTF-8 puts in their place (`tokend import-ripple` reads
// a binary column as UTF-8): the name it stands for is lost, so it is refused rather than changed.
const REPLACEMENT_CHARACTER = '\ufffd';

// Every script of Unicode 17 (the Script property's long names) but Common and Inherited, which every
// script shares (digits, punctuation, combining accents). A name the engine does not know is dropped: it has
// no characters there.
const SCRIPTS = `
  Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali
  Beria_Erfe Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian
  Caucasian_Albanian Chakma Cham Cherokee Chisoi Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic
  Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Garay
  Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul
  Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inscriptional_Pahlavi
  Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script
  Khmer Khojki Khudawadi Kirat_Rai Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani
  Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui
  Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari
  Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian
  Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur
  Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic
  Samaritan Saurashtra Sharada Shavian Siddham Sidetic SignWriting Sinhala Sogdian Sora_Sompeng Soyombo
  Sundanese Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo Takri Tamil
  Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic
  Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square
`
  .trim()
  .split(/\s+/)
  .flatMap((name) => {
    try {
      return [
        {
          name,
          script: new RegExp(`^\\p{Script=${name}}$`, 'u'),
          extensions: new RegExp(`^\\p{Script_Extensions=${name}}$`, 'u'),
        },
      ];
    } catch {
      return [];
    }
  });
/** The scripts the rule tells apart (for the test that every character's script is among them). */
export const USERNAME_SCRIPTS: readonly string[] = SCRIPTS.map((s) => s.name);
const SHARED_BY_ALL = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
const UNASSIGNED = /^\p{Script=Unknown}$/u;

// The writing systems whose letters come from more than one script, as Unicode's mixed-script detection
// (UTS #39) has them: Japanese (Han, Hiragana, Katakana), Korean (Han, Hangul) and Chinese with Bopomofo.
const WRITING_SYSTEMS: Readonly<Record<string, readonly string[]>> = {
  Han: ['Japanese', 'Korean', 'Han with Bopomofo'],
  Hiragana: ['Japanese'],
  Katakana: ['Japanese'],
  Hangul: ['Korean'],
  Bopomofo: ['Han with Bopomofo'],
};

interface CharacterScripts {
  /** the character's Script, to name it in a reason */
  readonly script: string;
  /** every script and writing system the character is written in (its Script_Extensions, widened) */
  readonly in: ReadonlySet<string>;
}

// Per code point, once: names repeat few characters, and finding a character's scripts tries every script.
const MAX_SCRIPTS_SEEN = 4096;
const scriptsSeen = new Map<number, CharacterScripts | null>();

function scriptsOf(character: string): CharacterScripts | null {
  const codePoint = character.codePointAt(0)!;
  let found = scriptsSeen.get(codePoint);
  if (found !== undefined) return found;
  if (SHARED_BY_ALL.test(character)) found = null;
  else {
    const extensions = SCRIPTS.filter((s) => s.extensions.test(character)).map((s) => s.name);
    // Unassigned code points are in the Unknown script; a script newer than the list above still stands
    // apart from every other.
    const script =
      SCRIPTS.find((s) => s.script.test(character))?.name ??
      (UNASSIGNED.test(character) ? 'Unknown' : `U+${codePoint.toString(16).toUpperCase()}`);
    const all = new Set([script, ...extensions]);
    for (const name of [...all]) for (const system of WRITING_SYSTEMS[name] ?? []) all.add(system);
    found = { script, in: all };
  }
  // Bounded: an import of names made of ever new code points does not grow it past a few thousand.
  if (scriptsSeen.size >= MAX_SCRIPTS_SEEN) scriptsSeen.clear();
  scriptsSeen.set(codePoint, found);
  return found;
}

/**
 * The scripts of a name's characters when no one script (or writing system) holds them all, else
 * undefined. Characters of Common and Inherited (digits, punctuation, combining accents) go with any.
 * Beyond what it can see: a name written wholly in one script that looks like a name in another (Cyrillic
 * `асе` for Latin `ace`), and letters of one script that look like others of the same script (Latin `ǀ`,
 * U+01C0, for `l`), which only a table of confusable characters would catch.
 */
function mixedScripts(name: string): string[] | undefined {
  let shared: Set<string> | undefined;
  const scripts = new Set<string>();
  for (const character of name) {
    const of = scriptsOf(character);
    if (of === null) continue;
    scripts.add(of.script);
    shared = shared === undefined ? new Set(of.in) : new Set([...shared].filter((s) => of.in.has(s)));
  }
  return shared !== undefined && shared.size === 0 ? [...scripts] : undefined;
}

/** "A", "A and B", "A, B, and C" (without Intl.ListFormat, which would load ICU's locale data). */
const listed = (items: string[]): string =>
  items.length <= 2 ? items.join(' and ') : `${items.slice(0, -1).join(', ')}, and ${items.at(-1)}`;

/**
 * Why a new username is refused, or undefined when it may be used: the one rule for every new name
 * (`tokend user create`, `tokend import-ripple` and `tokend import`).
 */
export function usernameProblem(username: string): string | undefined {
  const name = username.trim();
  if (name === '' || name.length > MAX_USERNAME_LENGTH)
    return `a username has 1 to ${MAX_USERNAME_LENGTH} characters`;
  if (name.includes(REPLACEMENT_CHARACTER))
    return (
      'a username may not contain U+FFFD, the replacement character: it stands for bytes that were not ' +
      'valid UTF-8'
    );
  const normalised = name.normalize('NFKC');
  if (INVISIBLE.test(name) || INVISIBLE.test(normalised))
    return 'a username may not contain control, format or invisible characters (such as zero-width spaces)';
  if (normalised.trim() === '') return 'a username must have visible characters';
  if (usernameSafe(name).length > MAX_USERNAME_LENGTH)
    return `a username is longer than ${MAX_USERNAME_LENGTH} characters once normalised`;
  const scripts = mixedScripts(normalised);
  if (scripts !== undefined)
    return (
      `a username may not mix ${listed(scripts.map((s) => s.replaceAll('_', ' ')))} letters ` +
      '(letters of different scripts can look alike, such as Latin "a" and Cyrillic "а"; Han goes with ' +
      'Hiragana and Katakana, with Hangul or with Bopomofo)'
    );
  return undefined;
}
