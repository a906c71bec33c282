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
// Copy buttons beside identifiers: hidden without script or without a clipboard (a page served
// over plain http to another machine has none); the value is then selected by hand, whole.
if (navigator.clipboard)
  for (const button of document.querySelectorAll('button.copy[data-copy]')) button.hidden = false;
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button.copy[data-copy]') : null;
  if (!(button instanceof HTMLButtonElement)) return;
  const value = button.dataset.copy ?? '';
  navigator.clipboard.writeText(value).then(
    () => {
      const title = button.title;
      button.classList.add('copied');
      button.title = button.dataset.copied ?? title;
      setTimeout(() => {
        button.classList.remove('copied');
        button.title = title;
      }, 1500);
    },
    () => undefined,
  );
});
