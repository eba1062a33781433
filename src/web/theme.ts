// The look every page shares (sign-in, consent, the token page and its confirmations): colours, links,
// buttons, fields and focus rings, light and dark; and the icon. Each family of pages adds its own layout.

/** Accent (links, primary buttons, the icon), danger and focus colours, the same in both schemes. */
export const COLOURS = {
  accent: '#2457d6',
  danger: '#b3261e',
  focus: '#f5a623',
} as const;

/** Links on the dark scheme's cards: the accent is too dark to read there. */
const DARK_LINK = '#8fb0ff';

export const THEME_CSS = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5;--text:#1d1d24;--page:#f4f4f7;--card:#fff;--muted:#555;--line:#ddd;--link:${COLOURS.accent}}
*,*::before,*::after{box-sizing:border-box}
.brand{display:flex;gap:.5rem;align-items:center;margin:0 0 .75rem;font-weight:600;font-size:1.05rem}
.brand img{width:28px;height:28px}
body{margin:0;display:flex;justify-content:center;padding:2rem 1rem;background:var(--page);color:var(--text)}
main{width:100%;min-width:0;background:var(--card);border-radius:12px;padding:1.5rem 1.75rem;box-shadow:0 2px 12px #0002;overflow-wrap:break-word}
h1{font-size:1.35rem;margin:0 0 1rem}
a,a:visited,.link{color:var(--link)}
a:hover,.link:hover{text-decoration-thickness:2px}
label{font-weight:600}
input[type=text],input[type=password],select{font:inherit;padding:.5rem;border:1px solid #888;border-radius:6px;max-width:100%;background:var(--card);color:var(--text)}
input[type=text],input[type=password]{width:100%;margin-top:.25rem}
button,.button,.button:visited{font:inherit;line-height:1.5;padding:.45rem 1.1rem;border-radius:6px;border:1px solid #555;cursor:pointer;background:var(--card);color:var(--text);text-decoration:none;display:inline-block}
button.primary{background:${COLOURS.accent};border-color:${COLOURS.accent};color:#fff}
button.danger{background:${COLOURS.danger};border-color:${COLOURS.danger};color:#fff}
button.link{background:none;border:none;padding:0;color:var(--link);text-decoration:underline}
:focus-visible{outline:3px solid ${COLOURS.focus};outline-offset:2px}
.actions{display:flex;gap:.75rem;margin-top:1rem;flex-wrap:wrap;align-items:center}
.error{background:#fde8e8;color:#8a1111;border-radius:6px;padding:.6rem .8rem}
.notice{background:#e3f4e8;color:#0f4d22;border-radius:6px;padding:.75rem 1rem}
.muted{color:var(--muted);font-size:.92rem}
.inline{display:inline}
[hidden]{display:none!important}
@media (prefers-color-scheme:dark){:root{--text:#e8e8ee;--page:#15151b;--card:#22222b;--muted:#aaa;--line:#444;--link:${DARK_LINK}}
.error{background:#4a1d1d;color:#ffd6d6}.notice{background:#163a22;color:#c9f2d5}}
@media (max-width:30rem){body{padding:.75rem .5rem}main{padding:1rem}}
`;

/** The pages' icon: a key on the accent colour. Served at FAVICON_PATH (and /favicon.ico) and linked by every page. */
export const FAVICON_SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">` +
  `<rect width="32" height="32" rx="7" fill="${COLOURS.accent}"/>` +
  `<g fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round">` +
  `<circle cx="10.5" cy="16" r="5"/><path d="M15.5 16H27v4.5M22 16v3.5"/></g></svg>`;

export const FAVICON_PATH = '/favicon.svg';
