// The console's only script: progressive enhancement. Every page works without it.
// Forms marked data-confirm ask before they post (destructive actions).
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
// The language selector applies as soon as it changes.
document.addEventListener('change', (event) => {
  const field = event.target;
  if (field instanceof HTMLSelectElement && field.hasAttribute('data-autosubmit')) field.form?.submit();
});
// A page that answered a post and shows something once (a new secret) takes the place of that
// post in the history: reloading it loads the named page with GET, showing nothing again.
const answered = document.querySelector('[data-replace-location]');
if (answered) window.history.replaceState(null, '', answered.getAttribute('data-replace-location'));
// A copy button beside each identifier that names its label (ui.tsx, Ident): made here, so a page
// without script (or without a clipboard: one served over plain http to another machine) has no
// button that does nothing; the value is then selected by hand, whole.
if (navigator.clipboard) {
  for (const line of document.querySelectorAll('.ident-line[data-copy-label]')) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy';
    // The identifier's whole text: its hidden middle too.
    button.dataset.copy = line.querySelector('code')?.textContent ?? '';
    button.title = line.getAttribute('data-copy-label') ?? '';
    button.setAttribute('aria-label', button.title);
    line.append(button);
  }
}
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button.copy[data-copy]') : null;
  if (!(button instanceof HTMLButtonElement)) return;
  navigator.clipboard.writeText(button.dataset.copy ?? '').then(
    () => {
      button.classList.add('copied');
      setTimeout(() => button.classList.remove('copied'), 1500);
    },
    () => undefined,
  );
});
