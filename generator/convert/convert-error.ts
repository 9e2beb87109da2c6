/**
 * Why a conversion failed, in one line that names the input (or output) file: the CLI prints it and exits 1.
 * @example throw new ConvertError('cities.csv', 'row 12: "abc" is not a longitude')
 */
export class ConvertError extends Error {
  /** The file the message is about, as the user named it. */
  readonly file: string;

  constructor(file: string, message: string, options?: ErrorOptions) {
    super(`${file}: ${message}`, options);
    this.name = 'ConvertError';
    this.file = file;
  }
}
