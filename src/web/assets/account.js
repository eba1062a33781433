for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  if (!field || !navigator.clipboard) continue;
  button.hidden = false;
  const status = document.getElementById(button.dataset.status);
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = 'Copied to the clipboard.';
    } catch {
      field.select();
      status.textContent = 'Press Ctrl+C to copy.';
    }
  });
}
