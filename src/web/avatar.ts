// An application's picture on the consent page and among connected applications: its avatar, or a neutral
// square with its initial when it has none or when the avatar does not load. No script decides it: a
// browser draws an image's ::after only when the image failed, and the square covers the broken-image icon.
import { type Html, html } from './html.ts';

/** The placeholder's colour: a neutral grey that reads as "no picture", with white text in both schemes. */
const PLACEHOLDER = '#6b7280';

/** The avatar's rules; each page sizes `.avatar` itself (width, height, border radius, font size). */
export const AVATAR_CSS = `
.avatar{display:inline-flex;align-items:center;justify-content:center;flex:none;position:relative;overflow:hidden;object-fit:cover;color:#fff;font-weight:700;line-height:1}
span.avatar,img.avatar::after{background:${PLACEHOLDER}}
img.avatar::after{content:attr(data-initial);position:absolute;inset:0;display:flex;align-items:center;justify-content:center}
`;

const initialOf = (name: string): string => [...name.trim()][0]?.toUpperCase() ?? '?';

/** The picture of an application named `name` whose avatar URL is `url` ('' for none), `size` pixels square. */
export function avatar(name: string, url: string, size: number): Html {
  const initial = initialOf(name);
  return url
    ? html`<img
        class="avatar"
        src="${url}"
        alt=""
        width="${size}"
        height="${size}"
        data-initial="${initial}"
      />`
    : html`<span class="avatar" aria-hidden="true">${initial}</span>`;
}
