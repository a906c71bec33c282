export * from './activation.js';
export * from './messages.js';
export * from './typed-code.js';
